"""Training-step detection for automatic PyTorch instrumentation.

A step is one iteration of the training (or evaluation) loop. The patches in ``_patches`` and
``_data`` report what they see; this module turns it into steps with the recorder's deferred
steps (the phase is known only once the step is over). The boundary rules, also documented in
docs/pytorch.md:

1. Loader-driven loops. Each batch fetched from a DataLoader iterator begins a step at the
   moment the loop asked for it (so the data-loader wait is inside the step). The step ends
   when the loop asks that iterator for its next batch, when the iterator is exhausted or
   dropped, when another iterator begins a step, or when the process exits.
   Read-ahead: a loop may fetch batches before it works on them (Lightning's and Accelerate's
   fetchers look one batch ahead to learn which is last; the Hugging Face Trainer fetches all k
   batches of a gradient-accumulation update at once). A batch that arrives while the step has
   seen no forward, backward or optimizer step yet is such a batch fetched ahead: it joins the
   step as pending, and the step does not end at the next fetch while batches are pending.
   Once the step is active, the anchor model's next top-level forward begins the next pending
   batch's step (the boundary is the forward). Batches fetched ahead that no forward follows
   (a loop that only reads data) become steps of their own, once MAX_READ_AHEAD of them have
   piled up, another loader starts or the loader ends.
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
# Batches fetched ahead with no forward after them that are held back before they are taken for
# a loop that only reads data (rule 1); the Hugging Face Trainer fetches as many as the
# gradient-accumulation steps.
MAX_READ_AHEAD = 64
_CANCELLED_STEP = -3  # STEPSCOPE_CANCELLED_STEP: readers drop the step
PHASE_NAMES = ("TRAIN", "EVAL", "PREDICT", "GLOBAL")


class _OpenStep:
    __slots__ = ("source", "begin_ticks", "predicted_phase", "predicted_number", "train_evidence",
                 "forward_seen", "optimizer_steps", "update_skipped", "pending", "fetched_ahead_ticks",
                 "exhausted")

    def __init__(self, source, begin_ticks, predicted_phase, predicted_number, pending=0, exhausted=False):
        self.source = source
        self.begin_ticks = begin_ticks
        self.predicted_phase = predicted_phase
        self.predicted_number = predicted_number
        self.train_evidence = False
        self.forward_seen = False
        self.optimizer_steps = 0
        self.update_skipped = False
        self.pending = pending          # batches of this loader fetched ahead, not begun yet
        self.fetched_ahead_ticks = []   # when each was asked for, while the step is not active
        self.exhausted = exhausted      # the loader ended while batches were pending

    def active(self):
        """Whether the loop has worked on the step's batch (a forward, backward or update)."""
        return self.forward_seen or self.train_evidence

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

    def top_level_forward(self, module, training, in_closure=False, first_in_closure=False):
        """A module's forward was called outside any other module's forward. Inside an
        optimizer's closure (`in_closure`) the anchor's forward begins no step of its own (rule
        2: LBFGS calls the closure several times per step), but the first closure call of a
        step may begin a pending batch's step (rule 1: Lightning runs each batch's forward in
        the closure it hands to optimizer.step)."""
        if self._anchor_model_id is None:
            self._anchor_model_id = id(module)
        is_anchor = id(module) == self._anchor_model_id
        open_step = self._open
        if open_step is not None and open_step.source != "model":
            if (is_anchor and open_step.pending and open_step.active()
                    and (not in_closure or first_in_closure)):
                self._begin_pending_batch(open_step, training)
            elif is_anchor and open_step.exhausted and not open_step.pending and not in_closure:
                self._begin_model_step(training)  # the loader is done: rule 2 again
        elif is_anchor and not in_closure:
            # Rule 2: the anchor model's forward begins a step unless a loader drives the loop.
            self._begin_model_step(training)
        open_step = self._open
        if open_step is not None:
            open_step.fetched_ahead_ticks = []  # active now: what it fetched ahead is pending
            open_step.forward_seen = True
            if training:
                open_step.train_evidence = True

    def _begin_model_step(self, training):
        ticks = _core.now()
        if self.end_step(ticks):
            ticks = _core.now()  # after a window's stop: stepscope's time is in no step
        self.begin_step("model", ticks, TRAIN if training else EVAL)

    def _begin_pending_batch(self, open_step, training):
        """The anchor's forward begins the next batch fetched ahead (rule 1, read-ahead)."""
        ticks = _core.now()
        if self.end_step(ticks):
            ticks = _core.now()
        self.begin_step(open_step.source, ticks, TRAIN if training else EVAL, pending=open_step.pending - 1,
                        exhausted=open_step.exhausted)

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
        """The loop asks a DataLoader iterator for a batch: the step it was in is over, unless
        it has not begun its work or has batches pending (rule 1, read-ahead)."""
        ticks = _core.now()
        open_step = self._open
        if (open_step is not None and open_step.source == iterator_id and open_step.active()
                and not open_step.pending and self.end_step(ticks)):
            ticks = _core.now()  # after a window's stop: stepscope's time is in no step
        return ticks

    def loader_delivered(self, iterator_id, asked_ticks, training_hint):
        """A batch arrived: it is a step, which began when the loop asked for it (rule 1)."""
        open_step = self._open
        if open_step is not None and open_step.source == iterator_id and (open_step.pending
                                                                         or not open_step.active()):
            open_step.pending += 1  # fetched ahead
            if not open_step.active():
                open_step.fetched_ahead_ticks.append(asked_ticks)
                if len(open_step.fetched_ahead_ticks) >= MAX_READ_AHEAD:
                    self._take_fetched_ahead_as_steps(open_step)
            return
        self._end_open_step(asked_ticks)
        predicted = self._last_phase_by_source.get(iterator_id, TRAIN if training_hint else EVAL)
        self.begin_step(iterator_id, asked_ticks, predicted)

    def loader_finished(self, iterator_id):
        """The iterator is exhausted or dropped: its open step ends now, unless batches it
        fetched ahead are still to be worked on."""
        open_step = self._open
        if open_step is not None and open_step.source == iterator_id:
            if open_step.active() and open_step.pending:
                open_step.exhausted = True
            else:
                self._end_open_step(_core.now())
        self._last_phase_by_source.pop(iterator_id, None)

    def _take_fetched_ahead_as_steps(self, open_step):
        """Batches fetched while the step never became active were no read-ahead: each is a
        step of its own, from its fetch to the next (rule 1); the last one stays open."""
        fetched = open_step.fetched_ahead_ticks
        open_step.fetched_ahead_ticks = []
        open_step.pending = 0
        for ticks in fetched:
            self.end_step(ticks)
            self.begin_step(open_step.source, ticks, open_step.predicted_phase)

    def _end_open_step(self, ticks):
        open_step = self._open
        if open_step is not None and open_step.fetched_ahead_ticks:
            self._take_fetched_ahead_as_steps(open_step)
        self.end_step(ticks)

    def user_step_seen(self):
        """An explicit stepscope.step() ran: automatic steps stop from here on (rule 4). A step
        opened just before (by the loader's next()) is withdrawn, not counted."""
        if self._user_steps:
            return
        self._user_steps = True
        open_step = self._open
        if open_step is not None and not open_step.active():
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

    def begin_step(self, source, ticks, predicted_phase, pending=0, exhausted=False):
        if self._user_steps or not _core.is_enabled():
            return
        # The begin carries the predicted phase, which a step cut short (the job killed mid-step)
        # keeps; a finished step takes the phase its end decides.
        _core.step_begin_at(predicted_phase, _core.DEFERRED_STEP, ticks)
        self._open = _OpenStep(source, ticks, predicted_phase, self._numbers[predicted_phase], pending, exhausted)
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
        self._end_open_step(_core.now())
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
