"""Loading a user's model file: a .py file that defines build() (shared by `run` and `sweep`).

A model .py file is trusted code: it runs with the user's rights (docs/guide/reliability.md).
What the command line guards against is a mistake in it: any exception, ``sys.exit()`` and a loop
that never ends (a time limit, :data:`TIME_LIMIT_S`, env MULTIBODY_USER_TIMEOUT) become one
MultibodyError naming the file, never a traceback, a silent exit or a hang.
"""
from __future__ import annotations

import ctypes
import importlib.util
import os
import signal
import threading
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path

from ..errors import MultibodyError
from ..results.tempfiles import Terminated

#: seconds a model file may take to load and to build its model (main thread of the command line)
TIME_LIMIT_S = 120.0


class _TimeUp(BaseException):
    """Raised by the alarm inside the user's code (a BaseException: the user's ``except Exception``
    cannot swallow it)."""


def time_limit_s() -> float:
    """MULTIBODY_USER_TIMEOUT (seconds, 0: none) or :data:`TIME_LIMIT_S`."""
    try:
        return max(float(os.environ.get("MULTIBODY_USER_TIMEOUT", TIME_LIMIT_S)), 0.0)
    except ValueError:
        return TIME_LIMIT_S


def _set_async(thread_id: int, exc) -> None:
    """Raise ``exc`` in the thread ``thread_id`` at its next Python instruction (None: clear a pending one)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(exc) if exc else None)


@contextmanager
def _thread_time_limit(limit: float):
    """Outside the main thread (a sweep's Dask worker runs scenarios in threads; SIGALRM reaches only the
    main thread): :class:`_TimeUp` is raised in this thread after ``limit`` seconds by a timer thread
    (``PyThreadState_SetAsyncExc``: interrupts Python code, e.g. ``while True: pass``; a loop inside
    C code finishes its call first). A time-up that fires as the code returns is withdrawn."""
    tid, lock, state = threading.get_ident(), threading.Lock(), {"done": False, "fired": False}

    def fire():
        with lock:
            if not state["done"]:
                state["fired"] = True
                _set_async(tid, _TimeUp)
    timer = threading.Timer(limit, fire)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        with lock:
            state["done"] = True
            if state["fired"]:
                _set_async(tid, None)
        timer.cancel()


def run_user_code(fn, what: str, *args, **kwargs):
    """``fn(*args, **kwargs)`` of a user's file: SystemExit and a run over the time limit (main thread:
    SIGALRM; other threads: :func:`_thread_time_limit`) become a MultibodyError naming ``what``; other
    exceptions pass unchanged."""
    limit = time_limit_s()
    timed = limit > 0 and threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    threaded = _thread_time_limit(limit) if limit > 0 and not timed else nullcontext()
    outer = 0.0
    if timed:
        def alarm(_signum, _frame):
            raise _TimeUp
        outer, started = signal.getitimer(signal.ITIMER_REAL)[0], time.monotonic()   # a caller's own timer
        previous = signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, min(limit, outer) if outer else limit)
    try:
        with threaded:
            return fn(*args, **kwargs)
    except Terminated:
        raise
    except SystemExit as exc:
        raise MultibodyError(f"{what} called sys.exit({'' if exc.code is None else exc.code!r}); a model file "
                             "must return a model, not end the program.") from None
    except _TimeUp:
        if outer and outer <= limit:     # the caller's deadline, not ours: hand it on
            signal.signal(signal.SIGALRM, previous)
            outer = 0.0
            signal.raise_signal(signal.SIGALRM)
        raise MultibodyError(f"{what} did not finish within {limit:g} s (an endless loop?); "
                             "MULTIBODY_USER_TIMEOUT sets the limit in seconds (0: none).") from None
    finally:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
            if outer:
                signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - started), 1e-3))


#: seconds between two looks of :func:`watch_user_calls` at the running code
WATCH_TICK_S = 1.0


class _CallTimeUp(BaseException):
    """One call of a user's function ran over the limit (raised inside it)."""


def _user_frame(frame, files: set):
    """The outermost frame of the stack ``frame`` running code of one of ``files``, or None."""
    found = None
    while frame is not None:
        if frame.f_code.co_filename in files:
            found = frame
        frame = frame.f_back
    return found


@contextmanager
def watch_user_calls(spec: str):
    """While a run goes on: one call of a function of the model file ``spec`` (a force, a torque; a
    ``.py`` file only) that does not return within :func:`time_limit_s` becomes a MultibodyError naming
    the function, its line and the file (an endless loop in a force hung ``run``, also with
    --time-limit, which is checked between steps). A SIGALRM every WATCH_TICK_S seconds looks whether
    the same call (the same frame object, kept referenced so that its identity is not reused) is still
    on the stack; main thread only. A caller's own timer (a test's) is handed on when it is due."""
    limit = time_limit_s()
    if limit <= 0 or Path(spec).suffix != ".py" or threading.current_thread() is not threading.main_thread() \
            or not hasattr(signal, "setitimer"):
        yield
        return
    files = {spec, str(Path(spec).resolve()), os.path.abspath(spec)}
    outer = signal.getitimer(signal.ITIMER_REAL)[0]
    due = time.monotonic() + outer if outer else None
    state = {"frame": None, "since": time.monotonic()}

    def tick(_signum, frame):
        if due is not None and time.monotonic() >= due:       # the caller's deadline: its handler
            signal.signal(signal.SIGALRM, previous)
            signal.raise_signal(signal.SIGALRM)
        user = _user_frame(frame, files)
        if user is None or user is not state["frame"]:
            state["frame"], state["since"] = user, time.monotonic()
        elif time.monotonic() - state["since"] > limit:
            state["frame"] = None
            raise _CallTimeUp(user.f_code.co_name, user.f_lineno)
    previous = signal.signal(signal.SIGALRM, tick)
    signal.setitimer(signal.ITIMER_REAL, WATCH_TICK_S, WATCH_TICK_S)
    try:
        yield
    except _CallTimeUp as exc:
        name, line = exc.args
        raise MultibodyError(f"model file '{spec}': a call of {name}() (line {line}) did not return within "
                             f"{limit:g} s (an endless loop?); MULTIBODY_USER_TIMEOUT sets the limit in seconds "
                             "(0: none).") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        if signal.getsignal(signal.SIGALRM) is tick:
            signal.signal(signal.SIGALRM, previous)
        if due is not None:
            signal.setitimer(signal.ITIMER_REAL, max(due - time.monotonic(), 1e-3))


def load_module(spec: str, what: str = "build() returning a model"):
    """Import the Python file ``spec`` and return its module, which must define a callable build().

    Any error in the user's file becomes a MultibodyError naming the file (never a traceback)."""
    path = Path(spec)
    if path.suffix != ".py":
        raise MultibodyError(f"unknown model '{spec}': not a built-in model (see 'multibody models') "
                             "and not a path to a model file (.toml, .json, .urdf) or a .py file.")
    if not path.is_file():
        raise MultibodyError(f"model file '{spec}' does not exist.")
    module_spec = importlib.util.spec_from_file_location(f"multibody_user_{path.stem}", path)
    module = importlib.util.module_from_spec(module_spec)
    try:
        run_user_code(module_spec.loader.exec_module, f"model file '{spec}'", module)
    except MultibodyError:
        raise
    except Exception as exc:  # the user's file: report, never a traceback
        raise MultibodyError(f"model file '{spec}' failed to load: {type(exc).__name__}: {exc}") from None
    if not callable(getattr(module, "build", None)):
        raise MultibodyError(f"model file '{spec}' does not define a function {what}.")
    return module


def end_time(module, spec: str, default: float = 1.0) -> float:
    """The module's T_END (default ``default``): a positive finite number, else a MultibodyError."""
    value = getattr(module, "T_END", default)
    try:
        t = float(value)
    except (TypeError, ValueError):
        t = float("nan")
    if isinstance(value, bool) or not (t > 0 and t < float("inf")):
        raise MultibodyError(f"model file '{spec}': T_END must be a positive number of seconds, got {value!r}.")
    return t
