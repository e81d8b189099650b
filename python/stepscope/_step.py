"""Training steps: ``with stepscope.step(phase="TRAIN", number=None):``."""

from stepscope import _core

PHASES = ("TRAIN", "EVAL", "PREDICT", "GLOBAL")
"""The step phases, in the recorder's order (TRAIN = 0 ... GLOBAL = 3)."""

_PHASE_CODES = {phase: code for code, phase in enumerate(PHASES)}

# Set by stepscope.torch.instrument(): told about every explicit step, so automatic step
# detection steps aside and detail windows follow the script's own steps. None otherwise.
_step_observer = None


def set_step_observer(observer):
    """``observer`` has user_step_begin(phase_code, number, ticks) and user_step_end(phase_code, number, ticks)."""
    global _step_observer
    _step_observer = observer


class step:  # noqa: N801 -- lower case like the other context managers of the API
    """A training (or evaluation, ...) step around a ``with`` block.

    Args:
        phase: "TRAIN", "EVAL", "PREDICT" or "GLOBAL", in any case.
        number: the step number (int >= 0), or None to number the phase's steps 0, 1, 2, ...
            in this process.

    Raises:
        ValueError: for an unknown phase or a negative number.
    """

    __slots__ = ("_phase", "_number", "_open", "_current")

    def __init__(self, phase="TRAIN", number=None):
        if not isinstance(phase, str) or phase.upper() not in _PHASE_CODES:
            raise ValueError(f"unknown step phase {phase!r}; use one of {', '.join(PHASES)}")
        if number is None:
            number = _core.AUTO_STEP
        elif not isinstance(number, int) or isinstance(number, bool) or number < 0:
            raise ValueError(f"step number must be an int >= 0 or None (automatic), got {number!r}")
        self._phase = _PHASE_CODES[phase.upper()]
        self._number = number
        self._open = 0
        self._current = number

    @property
    def phase(self):
        """The step's phase name, upper case."""
        return PHASES[self._phase]

    def __enter__(self):
        observer = _step_observer
        number = self._number
        if observer is not None and number == _core.AUTO_STEP:
            number = _core.next_step_number(self._phase)  # the observer needs it now
        if observer is not None:
            if _core.is_enabled():
                # The observer marks the lifecycle at the step's own timestamp.
                ticks = _core.now()
                _core.step_begin_at(self._phase, number, ticks)
                self._open += 1
                self._current = number
                observer.user_step_begin(self._phase, number, ticks)
            return self
        # Count only steps that began in the recording, so an exit never records an orphan end.
        if _core.step_begin(self._phase, number):
            self._open += 1
            self._current = number
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if self._open:
            self._open -= 1
            observer = _step_observer
            if observer is not None:
                ticks = _core.now()
                _core.step_end_at(self._phase, self._number, ticks)
                observer.user_step_end(self._phase, self._current, ticks)
            else:
                _core.step_end(self._phase, self._number)
        return False

    def __repr__(self):
        number = None if self._number == _core.AUTO_STEP else self._number
        return f"stepscope.step(phase={self.phase!r}, number={number!r})"
