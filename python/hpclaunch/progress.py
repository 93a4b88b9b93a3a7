"""Tell the agent that this rank is moving: one call a step, so that a hang (a collective waiting for a rank that is
elsewhere, a stalled loader) is found, its stacks recorded and the job restarted (`hpclaunch agent --hang-timeout`,
docs/agent.md, "Hangs"). Outside an hpclaunch agent it does nothing, so a script may call it everywhere.

    import hpclaunch.progress as progress
    for step, batch in enumerate(loader):
        ...
        progress.step(step)

Lightning: `Trainer(callbacks=[hpclaunch.progress.LightningProgress()])`."""
import os
import time

__all__ = ["step", "LightningProgress"]

_path = None
_last = 0.0
# At most one write a second (a step of 1 ms costs nothing): the agent reads the file at most once a second too.
_min_interval = 1.0


def step(number=None):
    """Progress: `number` is the training step (an int), or None when the program has no steps to give. A step
    that passes every earlier attempt's best is what counts as progress for --no-progress-limit."""
    global _path, _last
    if _path is None:
        _path = os.environ.get("HPCLAUNCH_PROGRESS_FILE", "")
    if not _path:
        return
    now = time.monotonic()
    if now - _last < _min_interval:
        return
    _last = now
    # Written in place, not renamed: the agent reads its time; a half-written number is read as no step.
    try:
        with open(_path, "w") as f:
            f.write("" if number is None else str(int(number)))
    except OSError:
        pass


def __getattr__(name):
    # LightningProgress is made on first use: importing Lightning takes seconds (a minute on a loaded node), which
    # every caller of step() would otherwise pay at its start, and the hang watch would count against it.
    if name != "LightningProgress":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    global LightningProgress
    try:
        from lightning.pytorch.callbacks import Callback
    except ImportError:
        from pytorch_lightning.callbacks import Callback

    class LightningProgress(Callback):
        """Reports the trainer's global step after each training batch, and each validation batch as a sign of
        life (a validation loop is progress too, though not a new step)."""

        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            step(trainer.global_step)

        def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
            step(trainer.global_step)

    return LightningProgress
