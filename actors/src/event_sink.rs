//! Where a listing's events go: a file, appended to, and/or standard output; and, after a
//! restart, the check that keeps an event from being written twice.

use std::fs::{File, OpenOptions};
use std::io::{self, Read as _, Seek as _, SeekFrom, Write as _};
use std::path::PathBuf;

use ferret::config::ListingSource;

/// How much of the events file's end is searched before an unmarked event is written again.
const TAIL_CHECKED: u64 = 1 << 20;

/// Where a listing's events go: a file (appended to) and/or standard output.
pub(crate) struct EventSink {
    file: Option<(PathBuf, File)>,
    stdout: bool,
}

impl EventSink {
    pub(crate) fn open(source: &ListingSource) -> anyhow::Result<EventSink> {
        let file = match &source.events_file {
            None => None,
            Some(path) => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(|err| {
                        anyhow::anyhow!("cannot create the directory of {}: {err}", path.display())
                    })?;
                }
                let file = OpenOptions::new()
                    .create(true)
                    .append(true)
                    .read(true)
                    .open(path)
                    .map_err(|err| {
                        anyhow::anyhow!(
                            "cannot open the events file {} of listing `{}`: {err}",
                            path.display(),
                            source.name
                        )
                    })?;
                Some((path.clone(), file))
            }
        };
        Ok(EventSink {
            file,
            stdout: source.events_stdout,
        })
    }

    /// Appends the lines, flushed.
    pub(crate) fn write<'a>(
        &mut self,
        lines: impl Iterator<Item = &'a str> + Clone,
    ) -> io::Result<()> {
        if self.stdout {
            let mut out = io::stdout().lock();
            for line in lines.clone() {
                writeln!(out, "{line}")?;
            }
            out.flush()?;
        }
        if let Some((_, file)) = &mut self.file {
            let mut buffer = String::new();
            for line in lines {
                buffer.push_str(line);
                buffer.push('\n');
            }
            file.write_all(buffer.as_bytes())?;
            file.flush()?;
        }
        Ok(())
    }

    /// Writes an event recorded before a stop but not marked emitted, unless the end of the
    /// events file already holds it (stdout cannot be checked: it is written again).
    pub(crate) fn resume(&mut self, line: &str) -> io::Result<()> {
        if let Some((_, file)) = &mut self.file {
            let len = file.metadata()?.len();
            file.seek(SeekFrom::Start(len.saturating_sub(TAIL_CHECKED)))?;
            let mut tail = String::new();
            file.read_to_string(&mut tail)?;
            if tail.lines().any(|written| written == line) {
                return Ok(());
            }
        }
        self.write(std::iter::once(line))
    }
}
