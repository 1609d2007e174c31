//! The guest's opens never block and reach only regular files and directories.
//!
//! wasmtime-wasi opens a path with a plain, blocking open: a FIFO named like a configuration file
//! would block the guest's `open-at` in the kernel, where the call's epoch deadline cannot reach, and
//! hang the host for good; a device such as /dev/zero would be read until the memory limit. So two
//! functions of `wasi:filesystem/types` are replaced by ones that open with `O_NONBLOCK` (and
//! `O_NOFOLLOW` unless the guest asked to follow a final symlink), resolve the path inside the mount
//! as wasmtime-wasi does (cap-primitives), check the type on the descriptor just opened, and refuse
//! anything but a regular file or a directory with `access` (the guest reads "Permission denied"; the
//! host logs what the file is):
//! - `open-at`: the checked descriptor itself is what the guest gets, so nothing can be swapped in
//!   between the check and the use;
//! - `set-times-at` following symlinks, which wasmtime-wasi implements by opening the file.
//!
//! The options, permission checks and errors of `open-at` are wasmtime-wasi's, restated here. All
//! other functions stay wasmtime-wasi's: none of them opens a path that could be a special file
//! (`stat-at` and `metadata-hash-at` use statx or `O_PATH`, which never block; `readlink-at`,
//! `link-at`, `rename-at`, `unlink-file-at` and the directory calls work on names or directories).

use std::fs;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

use cap_primitives::fs::{FollowSymlinks, OpenOptions};
use rustix::fs::OFlags;
use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::filesystem::{Descriptor, Dir, File, WasiFilesystemView};
use wasmtime_wasi::p2::FsError;
use wasmtime_wasi::p2::bindings::sync::filesystem::types::{
    self as wasi_fs, DescriptorFlags, ErrorCode, NewTimestamp, OpenFlags, PathFlags,
};
use wasmtime_wasi::{FsPerms, OpenMode};

use crate::bindings::graphiti::openclaw::host::LogLevel;
use crate::host_imports::GuestState;

/// The interface as wasmtime-wasi links it (its WIT version). Another version would link a second
/// instance holding only these two functions, and instantiation would fail: loud, not silent.
const FILESYSTEM_TYPES: &str = "wasi:filesystem/types@0.2.12";

/// Calls are synchronous, so file I/O runs on the calling thread (no blocking pool and back).
pub(crate) const FILE_IO_ON_CALLING_THREAD: bool = true;

/// Replaces wasmtime-wasi's `open-at` and `set-times-at`; call after `add_to_linker_sync`.
pub(crate) fn add_to_linker(linker: &mut Linker<GuestState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    {
        let mut types = linker.instance(FILESYSTEM_TYPES)?;
        types.func_wrap(
            "[method]descriptor.open-at",
            |mut store: StoreContextMut<'_, GuestState>,
             (fd, path_flags, path, open_flags, flags): (
                Resource<Descriptor>,
                PathFlags,
                String,
                OpenFlags,
                DescriptorFlags,
            )| {
                let state = store.data_mut();
                Ok((open_at(state, fd, path_flags, &path, open_flags, flags)?,))
            },
        )?;
        types.func_wrap(
            "[method]descriptor.set-times-at",
            |mut store: StoreContextMut<'_, GuestState>,
             (fd, path_flags, path, atim, mtim): (
                Resource<Descriptor>,
                PathFlags,
                String,
                NewTimestamp,
                NewTimestamp,
            )| {
                let state = store.data_mut();
                Ok((set_times_at(state, fd, path_flags, path, atim, mtim)?,))
            },
        )?;
    }
    linker.allow_shadowing(false);
    Ok(())
}

/// An `open-at` as the guest asked for it, checked against the mount's permissions.
struct OpenRequest {
    options: OpenOptions,
    mode: OpenMode,
    directory: bool,
}

impl OpenRequest {
    fn new(
        perms: FsPerms,
        path_flags: PathFlags,
        open_flags: OpenFlags,
        flags: DescriptorFlags,
    ) -> Result<OpenRequest, ErrorCode> {
        let create = open_flags.contains(OpenFlags::CREATE);
        let truncate = open_flags.contains(OpenFlags::TRUNCATE);
        let directory = open_flags.contains(OpenFlags::DIRECTORY);
        let write = flags.contains(DescriptorFlags::WRITE) || create || truncate;
        // Opened for reading unless asked to write only, as wasmtime-wasi does.
        let read = flags.contains(DescriptorFlags::READ) || !flags.contains(DescriptorFlags::WRITE);
        let sync = [
            DescriptorFlags::FILE_INTEGRITY_SYNC,
            DescriptorFlags::DATA_INTEGRITY_SYNC,
            DescriptorFlags::REQUESTED_WRITE_SYNC,
        ];
        if sync.into_iter().any(|flag| flags.contains(flag)) {
            return Err(ErrorCode::Unsupported);
        }
        if directory && (create || truncate || open_flags.contains(OpenFlags::EXCLUSIVE)) {
            return Err(ErrorCode::Invalid);
        }
        if write && perms.write_not_permitted() {
            return Err(ErrorCode::NotPermitted);
        }

        let mut options = OpenOptions::new();
        options.read(read).write(write).truncate(truncate);
        if create && open_flags.contains(OpenFlags::EXCLUSIVE) {
            options.create_new(true);
        } else {
            options.create(create);
        }
        // cap-primitives' hooks for what std's OpenOptions lacks (cap-fs-ext uses them too).
        options._cap_fs_ext_nonblock(true);
        options._cap_fs_ext_follow(if path_flags.contains(PathFlags::SYMLINK_FOLLOW) {
            FollowSymlinks::Yes
        } else {
            FollowSymlinks::No
        });
        let mut mode = OpenMode::empty();
        mode.set(OpenMode::READ, read);
        mode.set(OpenMode::WRITE, write);
        Ok(OpenRequest {
            options,
            mode,
            directory,
        })
    }
}

enum Opened {
    Dir(fs::File),
    /// A regular file, with its size when opened.
    File(fs::File, u64),
}

enum Refusal {
    /// Not a regular file or a directory: what it is.
    Special(&'static str),
    Io(io::Error),
}

impl From<io::Error> for Refusal {
    fn from(err: io::Error) -> Self {
        Refusal::Io(err)
    }
}

fn open_at(
    state: &mut GuestState,
    fd: Resource<Descriptor>,
    path_flags: PathFlags,
    path: &str,
    open_flags: OpenFlags,
    flags: DescriptorFlags,
) -> wasmtime::Result<Result<Resource<Descriptor>, ErrorCode>> {
    let Descriptor::Dir(dir) = state.table.get(&fd)? else {
        return Ok(Err(ErrorCode::NotDirectory));
    };
    let dir = dir.clone();
    let request = match OpenRequest::new(dir.perms, path_flags, open_flags, flags) {
        Ok(request) => request,
        Err(code) => return Ok(Err(code)),
    };
    let descriptor = match open_checked(&dir.dir, path, &request.options, request.directory) {
        Ok(Opened::Dir(opened)) => Descriptor::Dir(Dir::new(
            opened,
            dir.perms,
            request.mode,
            FILE_IO_ON_CALLING_THREAD,
        )),
        Ok(Opened::File(opened, size)) => {
            note_file_size(state, &opened, size, path);
            Descriptor::File(File::new(
                opened,
                dir.perms,
                request.mode,
                FILE_IO_ON_CALLING_THREAD,
            ))
        }
        Err(refusal) => return Ok(Err(refused(state, &dir.dir, path, refusal)?)),
    };
    Ok(Ok(state.table.push(descriptor)?))
}

/// Keeps the file as the call's largest opened so far, by its host path (`path`, relative to its
/// mount, when the kernel cannot say).
fn note_file_size(state: &mut GuestState, file: &fs::File, size: u64, path: &str) {
    if state
        .largest_file_opened
        .as_ref()
        .is_some_and(|(_, largest)| *largest >= size)
    {
        return;
    }
    let host_path = fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .unwrap_or_else(|_| path.into());
    state.largest_file_opened = Some((host_path, size));
}

/// Opens without blocking, then keeps the descriptor only if it is a directory or a regular file.
fn open_checked(
    dir: &fs::File,
    path: &str,
    options: &OpenOptions,
    directory: bool,
) -> Result<Opened, Refusal> {
    let opened = match cap_primitives::fs::open(dir, Path::new(path), options) {
        Ok(opened) => opened,
        // What a non-blocking open gives for a socket, a FIFO opened to write with no reader, or a
        // device without its hardware.
        Err(err) if err.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error()) => {
            return Err(Refusal::Special("a socket, FIFO or device"));
        }
        Err(err) => return Err(Refusal::Io(err)),
    };
    let metadata = opened.metadata()?;
    let file_type = metadata.file_type();
    let kind = if file_type.is_dir() {
        Opened::Dir(opened)
    } else if directory {
        return Err(Refusal::Io(rustix::io::Errno::NOTDIR.into()));
    } else if file_type.is_file() {
        Opened::File(opened, metadata.len())
    } else if file_type.is_fifo() {
        return Err(Refusal::Special("a FIFO (named pipe)"));
    } else if file_type.is_char_device() || file_type.is_block_device() {
        return Err(Refusal::Special("a device"));
    } else if file_type.is_socket() {
        return Err(Refusal::Special("a socket"));
    } else {
        return Err(Refusal::Special("a special file"));
    };
    // O_NONBLOCK means nothing for regular files and directories on Linux; cleared all the same,
    // so the guest's descriptor behaves exactly as a blocking one.
    let (Opened::Dir(file) | Opened::File(file, _)) = &kind;
    let flags = rustix::fs::fcntl_getfl(file).map_err(io::Error::from)?;
    rustix::fs::fcntl_setfl(file, flags - OFlags::NONBLOCK).map_err(io::Error::from)?;
    Ok(kind)
}

/// The error the guest gets for a refused open; a special file is logged with where it is.
fn refused(
    state: &mut GuestState,
    dir: &fs::File,
    path: &str,
    refusal: Refusal,
) -> wasmtime::Result<ErrorCode> {
    match refusal {
        Refusal::Io(err) => error_code(state, err),
        Refusal::Special(what) => {
            // The mount's host path, when the platform can tell (Linux can).
            let where_ = fs::read_link(format!("/proc/self/fd/{}", dir.as_raw_fd()))
                .map(|host_dir| host_dir.join(path).display().to_string())
                .unwrap_or_else(|_| path.to_string());
            let message = format!(
                "refused to open {where_} for the plugin: it is {what}, not a regular file or directory"
            );
            state.logs.push(LogLevel::Warn, message);
            Ok(ErrorCode::Access)
        }
    }
}

/// wasmtime-wasi's mapping of an OS error to a WASI error code.
fn error_code(state: &mut GuestState, err: io::Error) -> wasmtime::Result<ErrorCode> {
    wasi_fs::Host::convert_error_code(&mut state.filesystem(), FsError::from(err))
}

fn set_times_at(
    state: &mut GuestState,
    fd: Resource<Descriptor>,
    path_flags: PathFlags,
    path: String,
    atim: NewTimestamp,
    mtim: NewTimestamp,
) -> wasmtime::Result<Result<(), ErrorCode>> {
    if !path_flags.contains(PathFlags::SYMLINK_FOLLOW) {
        // wasmtime-wasi sets these by name (utimensat without following): no open.
        let mut view = state.filesystem();
        return match wasi_fs::HostDescriptor::set_times_at(
            &mut view, fd, path_flags, path, atim, mtim,
        ) {
            Ok(()) => Ok(Ok(())),
            Err(err) => Ok(Err(wasi_fs::Host::convert_error_code(&mut view, err)?)),
        };
    }
    let Descriptor::Dir(dir) = state.table.get(&fd)? else {
        return Ok(Err(ErrorCode::NotDirectory));
    };
    let dir = dir.clone();
    if dir.perms.write_not_permitted() {
        return Ok(Err(ErrorCode::NotPermitted));
    }
    let times = match (file_time(atim), file_time(mtim)) {
        (Ok(accessed), Ok(modified)) => (accessed, modified),
        _ => return Ok(Err(ErrorCode::Overflow)),
    };
    let mut options = OpenOptions::new();
    options.read(true)._cap_fs_ext_nonblock(true);
    let file = match open_checked(&dir.dir, &path, &options, false) {
        Ok(Opened::Dir(file) | Opened::File(file, _)) => file,
        Err(refusal) => return Ok(Err(refused(state, &dir.dir, &path, refusal)?)),
    };
    let mut file_times = fs::FileTimes::new();
    if let Some(accessed) = times.0 {
        file_times = file_times.set_accessed(accessed);
    }
    if let Some(modified) = times.1 {
        file_times = file_times.set_modified(modified);
    }
    match file.set_times(file_times) {
        Ok(()) => Ok(Ok(())),
        Err(err) => Ok(Err(error_code(state, err)?)),
    }
}

/// None for "no change"; Err when the time does not fit.
fn file_time(time: NewTimestamp) -> Result<Option<SystemTime>, ()> {
    match time {
        NewTimestamp::NoChange => Ok(None),
        NewTimestamp::Now => Ok(Some(SystemTime::now())),
        NewTimestamp::Timestamp(at) => Duration::from_secs(at.seconds)
            .checked_add(Duration::from_nanos(at.nanoseconds.into()))
            .and_then(|since| SystemTime::UNIX_EPOCH.checked_add(since))
            .map(Some)
            .ok_or(()),
    }
}

#[cfg(test)]
mod tests;
