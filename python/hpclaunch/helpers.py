"""submitit.helpers' names, for scripts that move over from submitit: Checkpointable, DelayedSubmission,
as_completed, JobEnvironment (the same objects as hpclaunch's own)."""
from ._executor import Checkpointable, DelayedSubmission, JobEnvironment, as_completed

__all__ = ["Checkpointable", "DelayedSubmission", "JobEnvironment", "as_completed"]
