//! Text format: lexer, parser and printer (see docs/text-format.md).
