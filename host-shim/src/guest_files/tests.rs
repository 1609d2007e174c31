//! The replaced functions called directly, on a store's resource table, as the guest would.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Instant;

use wasmtime::component::ResourceTable;
use wasmtime_wasi::WasiCtx;
use wasmtime_wasi::p2::bindings::sync::filesystem::types::Datetime;

use super::*;
use crate::http::HttpGate;
use crate::limits::MemoryLimiter;
use crate::logs::LogSink;

struct Mount {
    state: GuestState,
    fd: Resource<Descriptor>,
    path: PathBuf,
    _removed_when_dropped: tempfile::TempDir,
}

/// A directory with a regular file `file`, a FIFO `fifo` and a symlink `link` → `file`, mounted
/// with `perms` as the guest's descriptor `fd`.
fn mount(label: &str, perms: FsPerms) -> Mount {
    let temp = tempfile::Builder::new()
        .prefix(&format!("graphiti-openclaw-guest-files-{label}-"))
        .tempdir()
        .expect("a temporary directory");
    let path = temp.path().to_path_buf();
    fs::write(path.join("file"), "data").unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path.join("fifo"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    std::os::unix::fs::symlink("file", path.join("link")).unwrap();
    let mut state = guest_state();
    let mode = match perms {
        FsPerms::ReadOnly => OpenMode::READ,
        FsPerms::ReadWrite => OpenMode::READ | OpenMode::WRITE,
    };
    let dir = fs::File::open(&path).unwrap();
    let dir = Dir::new(dir, perms, mode, FILE_IO_ON_CALLING_THREAD);
    let fd = state.table.push(Descriptor::Dir(dir)).unwrap();
    Mount {
        state,
        fd,
        path,
        _removed_when_dropped: temp,
    }
}

impl Mount {
    fn fd(&self) -> Resource<Descriptor> {
        Resource::new_borrow(self.fd.rep())
    }

    /// `open-at` on another thread; a call still blocked after 5 s fails the test (after
    /// unblocking the FIFO).
    fn open(
        &mut self,
        path: &str,
        path_flags: PathFlags,
        open_flags: OpenFlags,
        flags: DescriptorFlags,
    ) -> Result<(), ErrorCode> {
        let fifo = self.path.join("fifo");
        let fd = self.fd();
        let path = path.to_string();
        self.watched(fifo, move |state| {
            open_at(state, fd, path_flags, &path, open_flags, flags)
                .unwrap()
                .map(|_| ())
        })
    }

    fn set_times(&mut self, path: &str, path_flags: PathFlags) -> Result<(), ErrorCode> {
        let fifo = self.path.join("fifo");
        let fd = self.fd();
        let path = path.to_string();
        let at = NewTimestamp::Timestamp(Datetime {
            seconds: 1_000_000_000,
            nanoseconds: 0,
        });
        self.watched(fifo, move |state| {
            set_times_at(state, fd, path_flags, path, NewTimestamp::NoChange, at).unwrap()
        })
    }

    fn watched<R: Send + 'static>(
        &mut self,
        fifo: PathBuf,
        call: impl FnOnce(&mut GuestState) -> R + Send + 'static,
    ) -> R {
        let state = std::mem::replace(&mut self.state, guest_state());
        let (done, answer) = mpsc::channel();
        std::thread::spawn(move || {
            let mut state = state;
            let result = call(&mut state);
            let _ = done.send((result, state));
        });
        match answer.recv_timeout(Duration::from_secs(5)) {
            Ok((result, state)) => {
                self.state = state;
                result
            }
            Err(_) => {
                let _ = fs::OpenOptions::new().read(true).write(true).open(&fifo);
                panic!("the call blocked");
            }
        }
    }
}

/// A store's data with no preopens; descriptors are pushed into its table directly.
fn guest_state() -> GuestState {
    GuestState {
        wasi: WasiCtx::builder().build(),
        table: ResourceTable::new(),
        memory: MemoryLimiter::new(1 << 20),
        http: std::sync::Arc::new(HttpGate::new(&[], None).unwrap()),
        database: std::sync::Arc::new(crate::database::DatabaseGate::new(&[], None).unwrap()),
        logs: LogSink {
            echo: false,
            kept: Default::default(),
        },
        locks: crate::state_lock::StateLocks::new(None, |_| {}),
        mounts: Vec::new(),
        call_deadline: Instant::now(),
        largest_file_opened: None,
    }
}

const FOLLOW: PathFlags = PathFlags::SYMLINK_FOLLOW;
const READ: DescriptorFlags = DescriptorFlags::READ;

#[test]
fn opens_refuse_a_fifo_at_once_and_serve_files_and_directories() {
    let mut mount = mount("open", FsPerms::ReadWrite);
    let none = OpenFlags::empty();
    assert!(matches!(
        mount.open("fifo", FOLLOW, none, READ),
        Err(ErrorCode::Access)
    ));
    let write = DescriptorFlags::WRITE;
    let create = OpenFlags::CREATE | OpenFlags::TRUNCATE;
    assert!(matches!(
        mount.open("fifo", FOLLOW, create, write),
        Err(ErrorCode::Access)
    ));
    assert!(mount.open("file", FOLLOW, none, READ).is_ok());
    assert!(mount.open("link", FOLLOW, none, READ).is_ok());
    assert!(mount.open(".", FOLLOW, OpenFlags::DIRECTORY, READ).is_ok());
    assert!(mount.open("new", FOLLOW, create, write).is_ok());
    assert!(mount.path.join("new").is_file());
    let logs = mount.state.logs.kept.lock().unwrap().clone();
    assert!(
        logs.iter()
            .any(|(_, line)| line.contains("/fifo for the plugin: it is a FIFO")),
        "{logs:?}"
    );
}

#[test]
fn opens_keep_wasi_semantics() {
    let mut mount = mount("semantics", FsPerms::ReadWrite);
    let none = OpenFlags::empty();
    // No-follow: a final symlink is not followed.
    assert!(matches!(
        mount.open("link", PathFlags::empty(), none, READ),
        Err(ErrorCode::Loop)
    ));
    assert!(matches!(
        mount.open("file", FOLLOW, OpenFlags::DIRECTORY, READ),
        Err(ErrorCode::NotDirectory)
    ));
    let dir_create = OpenFlags::DIRECTORY | OpenFlags::CREATE;
    assert!(matches!(
        mount.open("d", FOLLOW, dir_create, READ),
        Err(ErrorCode::Invalid)
    ));
    let sync = READ | DescriptorFlags::FILE_INTEGRITY_SYNC;
    assert!(matches!(
        mount.open("file", FOLLOW, none, sync),
        Err(ErrorCode::Unsupported)
    ));
    let exclusive = OpenFlags::CREATE | OpenFlags::EXCLUSIVE;
    assert!(matches!(
        mount.open("file", FOLLOW, exclusive, DescriptorFlags::WRITE),
        Err(ErrorCode::Exist)
    ));
    assert!(matches!(
        mount.open("../outside", FOLLOW, none, READ),
        Err(ErrorCode::NotPermitted)
    ));
    assert!(matches!(
        mount.open("missing", FOLLOW, none, READ),
        Err(ErrorCode::NoEntry)
    ));
}

#[test]
fn a_read_only_mount_refuses_writes_before_opening() {
    let mut mount = mount("read-only", FsPerms::ReadOnly);
    let none = OpenFlags::empty();
    for (open_flags, flags) in [
        (none, DescriptorFlags::WRITE),
        (OpenFlags::CREATE, READ),
        (OpenFlags::TRUNCATE, READ),
    ] {
        assert!(matches!(
            mount.open("file", FOLLOW, open_flags, flags),
            Err(ErrorCode::NotPermitted)
        ));
    }
    assert_eq!(fs::read_to_string(mount.path.join("file")).unwrap(), "data");
    assert!(matches!(
        mount.set_times("file", FOLLOW),
        Err(ErrorCode::NotPermitted)
    ));
}

#[test]
fn set_times_following_symlinks_refuses_a_fifo_and_sets_a_files_times() {
    let mut mount = mount("times", FsPerms::ReadWrite);
    assert!(matches!(
        mount.set_times("fifo", FOLLOW),
        Err(ErrorCode::Access)
    ));
    assert!(mount.set_times("link", FOLLOW).is_ok());
    let meta = fs::metadata(mount.path.join("file")).unwrap();
    assert_eq!(meta.mtime(), 1_000_000_000);
    // Without following, the times are set by name, without opening: a FIFO is harmless.
    assert!(mount.set_times("fifo", PathFlags::empty()).is_ok());
}
