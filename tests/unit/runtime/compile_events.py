"""A listener of Numba's compile events for scripts that tests run in a fresh process: the
source to put in such a script after ``from numba.core import event``; it collects the name of
every function Numba compiles in ``names`` (under ``event.install_listener("numba:compile",
Recorder())``)."""

RECORDER = '''
names = []


class Recorder(event.Listener):
    def on_start(self, e):
        fn = getattr(e.data.get("dispatcher"), "py_func", None)
        names.append(getattr(fn, "__qualname__", str(fn)))

    def on_end(self, e):
        pass
'''
