"""submitit.helpers' names, for scripts that move over from submitit: Checkpointable, DelayedSubmission,
as_completed (the same objects as hpclaunch's own)."""
from ._executor import Checkpointable, DelayedSubmission, as_completed

__all__ = ["Checkpointable", "DelayedSubmission", "as_completed"]
