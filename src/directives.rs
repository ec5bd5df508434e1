//! `//!` directive comments in `.warp` files.
//!
//! ```text
//! //! run: --grid 4 --buffer out=zeros:128      default `warpjit run` arguments
//! //! expect: out[0..4] = 0 1 2 3                 checked by the filetest runner
//! %x = add %a, %b  //! expect-error: type         a diagnostic on this line
//! ```
//!
//! A directive is `//!` followed by `run:`, `expect:` or `expect-error:`;
//! other `//!` text is an ordinary comment. `run:` arguments are split like a
//! shell does: whitespace separates words, `'...'` quotes literally, `"..."`
//! quotes with `\"` and `\\` escapes, and `\` outside quotes escapes the next
//! character.

/// What a directive says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DirectiveKind {
    /// Default `run` arguments.
    Run(Vec<String>),
    /// `BUFFER[RANGE] = VALUES` (the text after `expect:`).
    Expect(String),
    /// The file must fail to check with a diagnostic on this line that
    /// contains this text.
    ExpectError(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directive {
    /// 1-based line of the comment.
    pub line: usize,
    pub kind: DirectiveKind,
}

/// All directives of `source`, in order.
pub fn scan(source: &str) -> Result<Vec<Directive>, String> {
    let mut found = Vec::new();
    for (index, text) in source.lines().enumerate() {
        let line = index + 1;
        let Some(at) = text.find("//!") else { continue };
        let body = text[at + 3..].trim_start();
        let kind = if let Some(args) = body.strip_prefix("run:") {
            DirectiveKind::Run(split_words(args).map_err(|e| format!("line {line}: {e}"))?)
        } else if let Some(rest) = body.strip_prefix("expect-error:") {
            DirectiveKind::ExpectError(rest.trim().to_string())
        } else if let Some(rest) = body.strip_prefix("expect:") {
            DirectiveKind::Expect(rest.trim().to_string())
        } else {
            continue;
        };
        found.push(Directive { line, kind });
    }
    Ok(found)
}

/// Splits a command line into words (see the module doc).
pub fn split_words(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("unterminated ' quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("unterminated \" quote".into()),
                        },
                        Some(c) => word.push(c),
                        None => return Err("unterminated \" quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(c) => word.push(c),
                    None => return Err("`\\` at the end of the line".into()),
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_like_a_shell() {
        assert_eq!(
            split_words(r#" --a 'b c'  "d \"e\"" f\ g '' "#),
            Ok(vec![
                "--a".to_string(),
                "b c".into(),
                "d \"e\"".into(),
                "f g".into(),
                "".into()
            ])
        );
        assert!(split_words("'open").is_err());
        assert!(split_words("\"open").is_err());
    }

    #[test]
    fn directives_are_found_with_their_lines() {
        let source = "//! Doc text, not a directive.\n\
                      //! run: --grid 2\n\
                      kernel @k { //! expect-error: bad\n\
                      }\n\
                      //!expect: out[0] = 1\n";
        let found = scan(source).expect("valid directives");
        assert_eq!(
            found,
            vec![
                Directive {
                    line: 2,
                    kind: DirectiveKind::Run(vec!["--grid".into(), "2".into()])
                },
                Directive {
                    line: 3,
                    kind: DirectiveKind::ExpectError("bad".into())
                },
                Directive {
                    line: 5,
                    kind: DirectiveKind::Expect("out[0] = 1".into())
                },
            ]
        );
        assert_eq!(
            scan("\n//! run: 'x").unwrap_err(),
            "line 2: unterminated ' quote"
        );
    }
}
