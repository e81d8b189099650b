"""Training-step detection for automatic PyTorch instrumentation.

A step is one iteration of the training (or evaluation) loop. The patches in ``_patches`` and
``_data`` report what they see; this module turns it into steps with the recorder's deferred
steps (the phase is known only once the step is over). The boundary rules, also documented in
docs/pytorch.md:

1. Loader-driven loops. Each batch fetched from a DataLoader iterator begins a step at the
   moment the loop asked for it (so the data-loader wait is inside the step). The step ends
   when the loop asks that iterator for its next batch, when the iterator is exhausted or
   dropped, when another iterator begins a step, or when the process exits.
2. Loops without a DataLoader. The first module whose forward is called at top level (not from
   inside another module's forward) is the anchor model, unless ``instrument(model=...)`` names
   one; each top-level forward of the anchor model outside a loader-driven step begins a step,
   which ends at the anchor's next such forward, when a loader-driven step begins, or at exit.
   Other models' forwards (a GAN's discriminator, a teacher model) belong to the open step.
3. Phase, decided when the step ends: TRAIN if inside it a forward ran on a module in training
   mode with gradients enabled, or a backward or an optimizer step ran; otherwise EVAL if any
   forward ran (``model.eval()``, ``torch.no_grad()``, ``torch.inference_mode()``); otherwise
   GLOBAL. Steps are numbered 0, 1, 2, ... per phase in each process.
4. Scripts that mark steps themselves with ``stepscope.step()`` keep theirs: from their first
   explicit step on, automatic steps stop (forward/backward/optimizer spans continue).
5. Optimizer updates. A finished TRAIN step carries the update it belongs to (args ``update``:
   the number of earlier TRAIN steps in which an optimizer stepped, so with gradient
   accumulation over k batches, k steps share one update), ``optimizer_steps`` (optimizer.step
   calls inside it) and ``update_skipped`` when a GradScaler skipped its optimizer step.

Threading: called from the training loop's thread; the GIL serialises the state.
"""

import atexit
import os

from stepscope import _core

TRAIN, EVAL, PREDICT, GLOBAL = 0, 1, 2, 3
_CANCELLED_STEP = -3  # STEPSCOPE_CANCELLED_STEP: readers drop the step
PHASE_NAMES = ("TRAIN", "EVAL", "PREDICT", "GLOBAL")


class _OpenStep:
    __slots__ = ("source", "begin_ticks", "predicted_phase", "predicted_number", "train_evidence",
                 "forward_seen", "optimizer_steps", "update_skipped")

    def __init__(self, source, begin_ticks, predicted_phase, predicted_number):
        self.source = source
        self.begin_ticks = begin_ticks
        self.predicted_phase = predicted_phase
        self.predicted_number = predicted_number
        self.train_evidence = False
        self.forward_seen = False
        self.optimizer_steps = 0
        self.update_skipped = False

    def phase(self):
        if self.train_evidence:
            return TRAIN
        return EVAL if self.forward_seen else GLOBAL


class StepTracker:
    """Turns loop evidence into steps. One per process (see ``tracker()``)."""

    def __init__(self):
        self._open = None
        self._numbers = [0, 0, 0, 0]
        self._anchor_model_id = None
        self._last_phase_by_source = {}
        self._first_step_recorded = False
        self._last_step_end_ticks = None
        self._user_steps = False
        self._updates = 0              # TRAIN steps so far in which an optimizer stepped (rule 5)
        self._optimizer_steps_total = 0
        # Objects with on_step_begin(phase, number) and on_step_end(phase, number); the latter
        # returns True when it did work worth leaving out of the next step (a window closed).
        self.listeners = []
        atexit.register(self.at_exit)
        os.register_at_fork(after_in_child=self._forget_after_fork)

    # Evidence from the patches -------------------------------------------------------------

    def set_anchor_model(self, module):
        self._anchor_model_id = id(module)

    def top_level_forward(self, module, training, may_begin_step=True):
        """A module's forward was called outside any other module's forward (and, without
        `may_begin_step`, inside an optimizer's step: a closure's forward begins no step)."""
        if self._anchor_model_id is None:
            self._anchor_model_id = id(module)
        open_step = self._open
        if (may_begin_step and id(module) == self._anchor_model_id
                and (open_step is None or open_step.source == "model")):
            # Rule 2: the anchor model's forward begins a step unless a loader drives the loop.
            ticks = _core.now()
            if self.end_step(ticks):
                ticks = _core.now()  # after a window's stop: stepscope's time is in no step
            self.begin_step("model", ticks, TRAIN if training else EVAL)
            open_step = self._open
        if open_step is not None:
            open_step.forward_seen = True
            if training:
                open_step.train_evidence = True

    def compiled_call(self):
        """A function compiled with torch.compile ran: a forward ran, inside its graph."""
        if self._open is not None:
            self._open.forward_seen = True

    def backward_ran(self):
        if self._open is not None:
            self._open.train_evidence = True

    def optimizer_step_ran(self):
        self._optimizer_steps_total += 1
        if self._open is not None:
            self._open.train_evidence = True
            self._open.optimizer_steps += 1

    def optimizer_steps_total(self):
        return self._optimizer_steps_total

    def optimizer_step_skipped(self):
        """A GradScaler skipped the optimizer's step (inf or NaN gradients)."""
        if self._open is not None:
            self._open.train_evidence = True
            self._open.update_skipped = True

    def loader_asks(self, iterator_id):
        """The loop asks a DataLoader iterator for a batch: the step it was in is over."""
        ticks = _core.now()
        if self._open is not None and self._open.source == iterator_id and self.end_step(ticks):
            ticks = _core.now()  # after a window's stop: stepscope's time is in no step
        return ticks

    def loader_delivered(self, iterator_id, asked_ticks, training_hint):
        """A batch arrived: it is a step, which began when the loop asked for it (rule 1)."""
        self.end_step(asked_ticks)
        predicted = self._last_phase_by_source.get(iterator_id, TRAIN if training_hint else EVAL)
        self.begin_step(iterator_id, asked_ticks, predicted)

    def loader_finished(self, iterator_id):
        """The iterator is exhausted or dropped: its open step ends now."""
        if self._open is not None and self._open.source == iterator_id:
            self.end_step(_core.now())
        self._last_phase_by_source.pop(iterator_id, None)

    def user_step_seen(self):
        """An explicit stepscope.step() ran: automatic steps stop from here on (rule 4). A step
        opened just before (by the loader's next()) is withdrawn, not counted."""
        if self._user_steps:
            return
        self._user_steps = True
        open_step = self._open
        if open_step is not None and not open_step.forward_seen and not open_step.train_evidence:
            self._open = None
            _core.step_end_at(GLOBAL, _CANCELLED_STEP, _core.now())
        else:
            self.end_step(_core.now())

    def user_step_begin(self, phase, number, ticks):
        """An explicit stepscope.step() began at `ticks`: the lifecycle and detail windows follow it."""
        self.user_step_seen()
        if not self._first_step_recorded:
            self._first_step_recorded = True
            _core.mark_at("Lifecycle:FirstStep", ticks)
        for listener in self.listeners:
            listener.on_step_begin(phase, number)

    def user_step_end(self, phase, number, ticks):
        self._last_step_end_ticks = ticks
        for listener in self.listeners:
            listener.on_step_end(phase, number)

    # Steps ---------------------------------------------------------------------------------

    def begin_step(self, source, ticks, predicted_phase):
        if self._user_steps or not _core.is_enabled():
            return
        # The begin carries the predicted phase, which a step cut short (the job killed mid-step)
        # keeps; a finished step takes the phase its end decides.
        _core.step_begin_at(predicted_phase, _core.DEFERRED_STEP, ticks)
        self._open = _OpenStep(source, ticks, predicted_phase, self._numbers[predicted_phase])
        for listener in self.listeners:
            listener.on_step_begin(predicted_phase, self._open.predicted_number)

    def end_step(self, ticks):
        open_step = self._open
        if open_step is None:
            return
        self._open = None
        phase = open_step.phase()
        number = self._numbers[phase]
        self._numbers[phase] += 1
        _core.step_end_at(phase, number, ticks)
        if phase == TRAIN:
            update = {"update": self._updates, "optimizer_steps": open_step.optimizer_steps}
            if open_step.update_skipped:
                update["update_skipped"] = 1
            _core.args(update)
            if open_step.optimizer_steps or open_step.update_skipped:
                self._updates += 1
        # Marked once the first step is known to be one (an automatic step can be withdrawn).
        if not self._first_step_recorded:
            self._first_step_recorded = True
            _core.mark_at("Lifecycle:FirstStep", open_step.begin_ticks)
        self._last_step_end_ticks = ticks
        if open_step.source != "model":
            self._last_phase_by_source[open_step.source] = phase
        busy = False
        for listener in self.listeners:
            busy = listener.on_step_end(phase, number) or busy
        return busy

    def steps_so_far(self, phase):
        return self._numbers[phase]

    def at_exit(self):
        if not _core.is_enabled():
            return
        self.end_step(_core.now())
        if self._last_step_end_ticks is not None:
            _core.mark_at("Lifecycle:LastStep", self._last_step_end_ticks)
        _core.mark("Lifecycle:Exit")

    def _forget_after_fork(self):
        # A forked child (a DataLoader worker) does not continue its parent's loop.
        self._open = None
        self._first_step_recorded = True
        self._last_step_end_ticks = None
        self.listeners = []


_TRACKER = None


def tracker():
    """The process's StepTracker, created on first use."""
    global _TRACKER
    if _TRACKER is None:
        _TRACKER = StepTracker()
    return _TRACKER
