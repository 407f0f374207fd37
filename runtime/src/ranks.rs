//! One `lifegen run` as one rank of many: who this process is, read from the variables the
//! usual launchers set, and the one secret the ranks share at the start (NCCL's unique id),
//! passed from the first rank to the others through a file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// This process's place among the ranks of one launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ranks {
    pub rank: usize,
    pub size: usize,
    /// Its place among the ranks on its host: which of the host's GPUs it takes.
    pub local_rank: usize,
    /// The launcher whose variables said so, for people.
    pub launcher: &'static str,
    /// What tells this launch from an earlier one with the same ranks (the launcher's job or
    /// rendezvous ids); empty where the launcher sets none.
    pub launch: String,
}

/// `(launcher, rank variable, size variable, local rank variable)`, tried in order.
const LAUNCHERS: [(&str, &str, &str, &str); 4] = [
    (
        "mpirun (Open MPI)",
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE",
        "OMPI_COMM_WORLD_LOCAL_RANK",
    ),
    (
        "PMI (MPICH, Intel MPI)",
        "PMI_RANK",
        "PMI_SIZE",
        "MPI_LOCALRANKID",
    ),
    // A step's tasks: a batch script alone has SLURM_PROCID and SLURM_NTASKS too, but no step.
    (
        "srun",
        "SLURM_PROCID",
        "SLURM_STEP_NUM_TASKS",
        "SLURM_LOCALID",
    ),
    ("torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"),
];

/// Variables that differ from one launch to the next, where launchers set them.
const LAUNCH_IDS: [&str; 10] = [
    "LIFEGEN_LAUNCH_ID",
    "TORCHELASTIC_RUN_ID",
    "TORCHELASTIC_RESTART_COUNT",
    "MASTER_ADDR",
    "MASTER_PORT",
    "SLURM_JOB_ID",
    "SLURM_STEP_ID",
    "PMIX_NAMESPACE",
    "OMPI_MCA_orte_hnp_uri",
    "PMI_KVSNAME",
];

/// How long a rank waits for the first rank's id before it gives up.
pub const WAIT_VARIABLE: &str = "LIFEGEN_RANK_WAIT";
const DEFAULT_WAIT: Duration = Duration::from_secs(300);

impl Ranks {
    /// The ranks the launcher's variables describe; `None` for a process launched alone (or as
    /// the only rank).
    pub fn from_environment() -> Result<Option<Ranks>, String> {
        Self::from_variables(|name| std::env::var(name).ok())
    }

    /// As [`Ranks::from_environment`], the variables read through `get`.
    pub fn from_variables(get: impl Fn(&str) -> Option<String>) -> Result<Option<Ranks>, String> {
        for (launcher, rank_name, size_name, local_name) in LAUNCHERS {
            let (Some(rank), Some(size)) = (get(rank_name), get(size_name)) else {
                continue;
            };
            let number = |name: &str, text: &str| {
                text.trim().parse::<usize>().map_err(|_| {
                    format!("{launcher} set {name}={text:?}, which is not a count of ranks")
                })
            };
            let (rank, size) = (number(rank_name, &rank)?, number(size_name, &size)?);
            if size == 0 || rank >= size {
                return Err(format!(
                    "{launcher} set {rank_name}={rank} and {size_name}={size}: a rank is below \
                     the number of ranks"
                ));
            }
            if size == 1 {
                return Ok(None);
            }
            let local_rank = match get(local_name) {
                Some(text) => number(local_name, &text)?,
                None => rank,
            };
            let launch = LAUNCH_IDS
                .iter()
                .filter_map(|name| get(name).map(|value| format!("{name}={value}")))
                .collect::<Vec<_>>()
                .join(";");
            return Ok(Some(Ranks {
                rank,
                size,
                local_rank,
                launcher,
                launch,
            }));
        }
        Ok(None)
    }

    pub fn is_first(&self) -> bool {
        self.rank == 0
    }

    /// Where the first rank leaves the launch's shared id: beside `output` (in the working
    /// folder without one), named after the launch, so that another launch's file is not read.
    pub fn id_path(&self, output: Option<&Path>) -> PathBuf {
        let folder = output
            .and_then(Path::parent)
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let name = output
            .and_then(Path::file_name)
            .map_or_else(|| "run".into(), |n| n.to_string_lossy().into_owned());
        let key = format!("{name}|{}|{}", self.size, self.launch);
        let hash = crc32fast::hash(key.as_bytes());
        folder.join(format!(".lifegen-ranks-{name}-{hash:08x}.id"))
    }

    /// `make()`'s bytes on every rank: the first rank makes them and leaves them at `path`
    /// (written whole, then renamed), the others wait for the file. `say` is told what a rank
    /// waits for once it has waited a few seconds.
    pub fn share(
        &self,
        path: &Path,
        make: impl FnOnce() -> Result<Vec<u8>, String>,
        mut say: impl FnMut(&str),
    ) -> Result<Vec<u8>, String> {
        let header = format!("lifegen ranks {} {}\n", self.size, self.launch);
        if self.is_first() {
            let bytes = make()?;
            let partial = path.with_extension(format!("partial-{}", std::process::id()));
            let written = std::fs::File::create(&partial).and_then(|mut f| {
                f.write_all(header.as_bytes())?;
                f.write_all(&bytes)?;
                f.sync_all()
            });
            written
                .and_then(|()| std::fs::rename(&partial, path))
                .map_err(|e| {
                    format!(
                        "cannot write the ranks' shared id to {}: {e}",
                        path.display()
                    )
                })?;
            return Ok(bytes);
        }
        let wait = wait();
        let start = Instant::now();
        let mut told = false;
        loop {
            if let Ok(text) = std::fs::read(path)
                && let Some(bytes) = text.strip_prefix(header.as_bytes())
            {
                return Ok(bytes.to_vec());
            }
            if !told && start.elapsed() > Duration::from_secs(5) {
                say(&format!(
                    "rank {} waits for rank 0's id at {} (a shared folder for every rank)",
                    self.rank,
                    path.display()
                ));
                told = true;
            }
            if start.elapsed() > wait {
                return Err(format!(
                    "rank {} waited {} s for rank 0 to write {}: is rank 0 running, and does \
                     every rank see the output's folder? ({WAIT_VARIABLE} sets the wait in seconds)",
                    self.rank,
                    wait.as_secs(),
                    path.display()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `work` (which waits for the other ranks), given up with an error once it has taken
    /// longer than a rank waits ([`WAIT_VARIABLE`]): it is left running, for the process to end.
    pub fn within_wait<T: Send + 'static>(
        &self,
        what: &str,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, String> {
        self.within(wait(), what, work)
    }

    fn within<T: Send + 'static>(
        &self,
        wait: Duration,
        what: &str,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, String> {
        let (done, result) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = done.send(work());
        });
        result.recv_timeout(wait).map_err(|_| {
            format!(
                "rank {} of {} waited {} s to {what}: did every rank start, with the same \
                 launch? ({WAIT_VARIABLE} sets the wait in seconds)",
                self.rank,
                self.size,
                wait.as_secs()
            )
        })
    }
}

fn wait() -> Duration {
    std::env::var(WAIT_VARIABLE)
        .ok()
        .and_then(|s| s.parse().ok())
        .map_or(DEFAULT_WAIT, Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn ranks(vars: &[(&str, &str)]) -> Result<Option<Ranks>, String> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Ranks::from_variables(|name| vars.get(name).cloned())
    }

    #[test]
    fn every_launcher_s_variables_name_the_rank() {
        let open_mpi = ranks(&[
            ("OMPI_COMM_WORLD_RANK", "3"),
            ("OMPI_COMM_WORLD_SIZE", "8"),
            ("OMPI_COMM_WORLD_LOCAL_RANK", "1"),
            ("PMIX_NAMESPACE", "prterun-host-1234@1"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            (open_mpi.rank, open_mpi.size, open_mpi.local_rank),
            (3, 8, 1)
        );
        assert_eq!(open_mpi.launch, "PMIX_NAMESPACE=prterun-host-1234@1");
        let srun = ranks(&[
            ("SLURM_PROCID", "5"),
            ("SLURM_STEP_NUM_TASKS", "6"),
            ("SLURM_NTASKS", "6"),
            ("SLURM_LOCALID", "1"),
            ("SLURM_JOB_ID", "77"),
            ("SLURM_STEP_ID", "0"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!((srun.rank, srun.size, srun.local_rank), (5, 6, 1));
        assert_eq!(srun.launcher, "srun");
        assert_eq!(srun.launch, "SLURM_JOB_ID=77;SLURM_STEP_ID=0");
        let torchrun = ranks(&[
            ("RANK", "1"),
            ("WORLD_SIZE", "2"),
            ("LOCAL_RANK", "1"),
            ("MASTER_ADDR", "127.0.0.1"),
            ("MASTER_PORT", "29500"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            (torchrun.rank, torchrun.size, torchrun.local_rank),
            (1, 2, 1)
        );
        let pmi = ranks(&[("PMI_RANK", "2"), ("PMI_SIZE", "4")])
            .unwrap()
            .unwrap();
        assert_eq!(
            (pmi.rank, pmi.local_rank),
            (2, 2),
            "no local rank: the rank"
        );
    }

    #[test]
    fn a_process_alone_is_no_rank_and_nonsense_is_an_error() {
        assert_eq!(ranks(&[]).unwrap(), None);
        assert_eq!(ranks(&[("RANK", "0"), ("WORLD_SIZE", "1")]).unwrap(), None);
        // A batch script's own variables: no step, no ranks.
        assert_eq!(
            ranks(&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "4")]).unwrap(),
            None
        );
        let error = ranks(&[("RANK", "4"), ("WORLD_SIZE", "4")]).unwrap_err();
        assert!(error.contains("RANK=4 and WORLD_SIZE=4"), "{error}");
        let error = ranks(&[("RANK", "x"), ("WORLD_SIZE", "4")]).unwrap_err();
        assert!(error.contains("RANK=\"x\""), "{error}");
    }

    #[test]
    fn the_first_rank_s_bytes_reach_every_rank_and_another_launch_s_file_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join("out.rle");
        let rank = |rank, launch: &str| Ranks {
            rank,
            size: 3,
            local_rank: rank,
            launcher: "torchrun",
            launch: launch.into(),
        };
        // Another launch's file, left by a run that was killed.
        let stale = rank(0, "MASTER_PORT=1");
        assert_ne!(
            stale.id_path(Some(&output)),
            rank(0, "MASTER_PORT=2").id_path(Some(&output))
        );
        let path = rank(0, "MASTER_PORT=2").id_path(Some(&output));
        std::fs::write(&path, b"lifegen ranks 3 MASTER_PORT=1\nold").unwrap();
        let got: Vec<Vec<u8>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..3)
                .map(|r| {
                    let (me, path) = (rank(r, "MASTER_PORT=2"), path.clone());
                    scope.spawn(move || {
                        if r == 0 {
                            std::thread::sleep(Duration::from_millis(100));
                        }
                        me.share(&path, || Ok(b"the id".to_vec()), |_| {}).unwrap()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(got.iter().all(|bytes| bytes == b"the id"), "{got:?}");
    }

    #[test]
    fn a_wait_for_ranks_that_never_come_ends_in_an_error() {
        let me = Ranks {
            rank: 0,
            size: 2,
            local_rank: 0,
            launcher: "torchrun",
            launch: String::new(),
        };
        let error = me
            .within(Duration::from_secs(1), "join the ranks", || {
                std::thread::sleep(Duration::from_secs(30))
            })
            .unwrap_err();
        assert!(error.contains("waited 1 s to join the ranks"), "{error}");
        assert_eq!(me.within_wait("add", || 2 + 2), Ok(4));
    }
}
