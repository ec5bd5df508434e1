//! Reading input files with a size limit.
//!
//! A file's reported size is only a hint: devices (`/dev/zero`), pipes and
//! files in `/proc` report 0 and can go on for ever. So the size is checked
//! before reading (a large regular file is refused at once) and the read
//! itself stops one byte past the limit.

use std::io::Read;
use std::path::Path;

/// The bytes of `path`, refused when it has more than `limit` bytes.
/// `what` names the limit in the message ("64 MiB").
pub fn read_at_most(path: &Path, limit: u64, what: &str) -> Result<Vec<u8>, String> {
    let shown = path.display();
    let too_large = || format!("{shown} is larger than {what}");
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let metadata = file
        .metadata()
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if metadata.is_dir() {
        return Err(format!("{shown} is a directory"));
    }
    if metadata.len() > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// Largest source file read (the parser's own limit).
const MAX_SOURCE_BYTES: u64 = 64 << 20;

/// Reads a `.warp` file as text, without a leading byte order mark; the
/// error names the file (and where its bytes stop being UTF-8).
pub fn read_source(path: &Path) -> Result<String, String> {
    let shown = path.display();
    if path.is_dir() {
        return Err(format!("{shown} is a directory, not a .warp file"));
    }
    let mut bytes = read_at_most(path, MAX_SOURCE_BYTES, "64 MiB")?;
    // A byte order mark is no part of the program: without it, columns
    // count as an editor shows them.
    if bytes.starts_with("\u{feff}".as_bytes()) {
        bytes.drain(..3);
    }
    String::from_utf8(bytes).map_err(|e| {
        let (line, col) = warpjit_ir::span::line_col(
            &String::from_utf8_lossy(&e.as_bytes()[..e.utf8_error().valid_up_to()]),
            usize::MAX,
        );
        format!("{shown}:{line}:{col}: not UTF-8 text")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endless_devices_stop_at_the_limit() {
        let e = read_at_most(Path::new("/dev/zero"), 1 << 20, "1 MiB").unwrap_err();
        assert_eq!(e, "/dev/zero is larger than 1 MiB");
    }

    #[test]
    fn files_up_to_the_limit_are_read_whole() {
        let dir = std::env::temp_dir().join(format!("warpjit-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("four.bin");
        std::fs::write(&path, [1u8, 2, 3, 4]).unwrap();
        assert_eq!(read_at_most(&path, 4, "4 bytes").unwrap(), vec![1, 2, 3, 4]);
        let e = read_at_most(&path, 3, "3 bytes").unwrap_err();
        assert!(e.ends_with("four.bin is larger than 3 bytes"), "{e}");
        assert!(read_at_most(&dir, 3, "3 bytes")
            .unwrap_err()
            .ends_with("is a directory"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
