//! NCCL, loaded at run time like the CUDA driver: the few calls the ranks need (a communicator
//! from a shared id, grouped sends and receives, an all-gather), each enqueued on a stream.
//!
//! cudarc 0.19 has NCCL bindings, but its loader tries `libnccl.so` and `libnccl.so.<CUDA
//! major>` and never `libnccl.so.2`, the one name NCCL's packages (the `nvidia-nccl-cu13` wheel,
//! the distributions' `libnccl2`) install; these bindings look for that name first.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::OnceLock;

use cudarc::driver::sys::{CUdeviceptr, CUstream};

use crate::gpu::device::GpuError;

/// A path to `libnccl.so.2`, tried before the library search path.
pub const LIBRARY_VARIABLE: &str = "LIFEGEN_NCCL";

/// The bytes the ranks share to make one communicator (`ncclUniqueId`).
pub const ID_BYTES: usize = 128;

#[repr(C)]
#[derive(Clone, Copy)]
struct UniqueId([c_char; ID_BYTES]);

type Comm = *mut c_void;
type Status = c_int;
const UINT8: c_int = 1;

struct Library {
    _lib: libloading::Library,
    get_unique_id: unsafe extern "C" fn(*mut UniqueId) -> Status,
    comm_init_rank: unsafe extern "C" fn(*mut Comm, c_int, UniqueId, c_int) -> Status,
    comm_destroy: unsafe extern "C" fn(Comm) -> Status,
    send: unsafe extern "C" fn(*const c_void, usize, c_int, c_int, Comm, CUstream) -> Status,
    recv: unsafe extern "C" fn(*mut c_void, usize, c_int, c_int, Comm, CUstream) -> Status,
    all_gather:
        unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, Comm, CUstream) -> Status,
    group_start: unsafe extern "C" fn() -> Status,
    group_end: unsafe extern "C" fn() -> Status,
    error_string: unsafe extern "C" fn(Status) -> *const c_char,
    version: unsafe extern "C" fn(*mut c_int) -> Status,
}

fn library() -> Result<&'static Library, GpuError> {
    static LIBRARY: OnceLock<Result<Library, String>> = OnceLock::new();
    LIBRARY
        .get_or_init(load)
        .as_ref()
        .map_err(|why| GpuError::NoDevice(why.clone()))
}

fn load() -> Result<Library, String> {
    let mut names: Vec<String> = std::env::var(LIBRARY_VARIABLE).into_iter().collect();
    names.extend(["libnccl.so.2".into(), "libnccl.so".into()]);
    let mut tried = Vec::new();
    for name in &names {
        // SAFETY: loading NCCL runs its initialisers, which do nothing but set up the library.
        match unsafe { libloading::Library::new(name) } {
            Ok(lib) => return bind(lib).map_err(|e| format!("{name} lacks {e}")),
            Err(e) => tried.push(format!("{name}: {e}")),
        }
    }
    Err(format!(
        "ranks exchange rows through NCCL, which was not found ({}); install it (the \
         nvidia-nccl-cu13 wheel puts libnccl.so.2 in site-packages/nvidia/nccl/lib) and add its \
         folder to LD_LIBRARY_PATH, or set {LIBRARY_VARIABLE} to the file",
        tried.join("; ")
    ))
}

fn bind(lib: libloading::Library) -> Result<Library, String> {
    // SAFETY: each symbol is NCCL's C function of that name, with the signature of nccl.h
    // (2.x), which its type here spells.
    unsafe {
        macro_rules! symbol {
            ($name:literal) => {
                *lib.get($name)
                    .map_err(|_| String::from_utf8_lossy(&$name[..$name.len() - 1]).into_owned())?
            };
        }
        Ok(Library {
            get_unique_id: symbol!(b"ncclGetUniqueId\0"),
            comm_init_rank: symbol!(b"ncclCommInitRank\0"),
            comm_destroy: symbol!(b"ncclCommDestroy\0"),
            send: symbol!(b"ncclSend\0"),
            recv: symbol!(b"ncclRecv\0"),
            all_gather: symbol!(b"ncclAllGather\0"),
            group_start: symbol!(b"ncclGroupStart\0"),
            group_end: symbol!(b"ncclGroupEnd\0"),
            error_string: symbol!(b"ncclGetErrorString\0"),
            version: symbol!(b"ncclGetVersion\0"),
            _lib: lib,
        })
    }
}

fn check(lib: &Library, status: Status, what: &str) -> Result<(), GpuError> {
    if status == 0 {
        return Ok(());
    }
    // SAFETY: NCCL returns a static string for every status.
    let message = unsafe { CStr::from_ptr((lib.error_string)(status)) };
    Err(GpuError::Driver {
        what: format!("NCCL: {what}"),
        message: message.to_string_lossy().into_owned(),
    })
}

/// NCCL's version as `major.minor.patch`, loading it.
pub fn version() -> Result<String, GpuError> {
    let lib = library()?;
    let mut code = 0;
    // SAFETY: writes one int.
    check(lib, unsafe { (lib.version)(&mut code) }, "read its version")?;
    Ok(format!(
        "{}.{}.{}",
        code / 10000,
        code / 100 % 100,
        code % 100
    ))
}

/// A fresh id for a communicator, made by one rank and given to the others.
pub fn unique_id() -> Result<Vec<u8>, GpuError> {
    let lib = library()?;
    let mut id = UniqueId([0; ID_BYTES]);
    // SAFETY: writes the id.
    check(lib, unsafe { (lib.get_unique_id)(&mut id) }, "make an id")?;
    Ok(id.0.iter().map(|&c| c as u8).collect())
}

/// One rank's end of a communicator among `size` ranks; made with the CUDA context of the GPU
/// it runs on current.
pub struct Communicator {
    comm: Comm,
    lib: &'static Library,
    pub rank: usize,
    pub size: usize,
}

// SAFETY: a communicator is used from one thread at a time (`&mut self`), which NCCL allows.
unsafe impl Send for Communicator {}

impl Communicator {
    /// Joins the communicator of `id` as `rank` of `size`; returns once every rank has joined.
    pub fn join(id: &[u8], rank: usize, size: usize) -> Result<Communicator, GpuError> {
        let lib = library()?;
        let mut unique = UniqueId([0; ID_BYTES]);
        if id.len() != ID_BYTES {
            return Err(GpuError::NoDevice(format!(
                "the ranks' shared id has {} bytes, not NCCL's {ID_BYTES}",
                id.len()
            )));
        }
        for (to, &from) in unique.0.iter_mut().zip(id) {
            *to = from as c_char;
        }
        let mut comm: Comm = std::ptr::null_mut();
        let (n, r) = (size as c_int, rank as c_int);
        // SAFETY: writes the communicator; the id is NCCL's own bytes.
        check(
            lib,
            unsafe { (lib.comm_init_rank)(&mut comm, n, unique, r) },
            "join the ranks",
        )?;
        Ok(Communicator {
            comm,
            lib,
            rank,
            size,
        })
    }

    /// Enqueues on `stream` every transfer of `transfers`, as one group: NCCL matches a rank's
    /// sends to a peer with that peer's receives from it in the order each posts them.
    ///
    /// # Safety
    /// Every address is device memory of this rank's GPU holding (or with room for) its
    /// bytes, not written by anything else until the stream has passed the transfers.
    pub unsafe fn exchange(
        &mut self,
        transfers: &[Transfer],
        stream: CUstream,
    ) -> Result<(), GpuError> {
        let lib = self.lib;
        check(lib, unsafe { (lib.group_start)() }, "start a group")?;
        let mut result = Ok(());
        for t in transfers {
            let status = match *t {
                Transfer::Send { from, bytes, peer } => unsafe {
                    (lib.send)(
                        from as *const c_void,
                        bytes,
                        UINT8,
                        peer as c_int,
                        self.comm,
                        stream,
                    )
                },
                Transfer::Receive { into, bytes, peer } => unsafe {
                    (lib.recv)(
                        into as *mut c_void,
                        bytes,
                        UINT8,
                        peer as c_int,
                        self.comm,
                        stream,
                    )
                },
            };
            if status != 0 {
                result = check(lib, status, "post a transfer");
                break;
            }
        }
        // The group is closed whatever happened inside it.
        let ended = check(lib, unsafe { (lib.group_end)() }, "run the transfers");
        result.and(ended)
    }

    /// Enqueues on `stream`: `bytes` from every rank's `from` into `into`, rank after rank.
    ///
    /// # Safety
    /// `from` holds `bytes` and `into` has room for `size * bytes`, on this rank's GPU.
    pub unsafe fn all_gather(
        &mut self,
        from: CUdeviceptr,
        into: CUdeviceptr,
        bytes: usize,
        stream: CUstream,
    ) -> Result<(), GpuError> {
        let lib = self.lib;
        let status = unsafe {
            (lib.all_gather)(
                from as *const c_void,
                into as *mut c_void,
                bytes,
                UINT8,
                self.comm,
                stream,
            )
        };
        check(lib, status, "gather the bands")
    }
}

impl Drop for Communicator {
    fn drop(&mut self) {
        // SAFETY: the communicator is NCCL's and used no more.
        let _ = unsafe { (self.lib.comm_destroy)(self.comm) };
    }
}

/// One transfer of a group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transfer {
    Send {
        from: CUdeviceptr,
        bytes: usize,
        peer: usize,
    },
    Receive {
        into: CUdeviceptr,
        bytes: usize,
        peer: usize,
    },
}
