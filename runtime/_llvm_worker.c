/* The C level of backends/cpu/llvm_worker.py: a helper's LLVM work on the worker thread, and
 * the entry point Numba's dispatcher holds while that work is not done.
 *
 * - compile(functions, bitcode, manager, builder, machine): parses ``bitcode`` into an LLVM
 *   context of its own, runs the module pass manager ``manager`` (with its pass builder
 *   ``builder``), verifies the module, and returns (its bitcode, its object code for the
 *   target machine ``machine``). ``functions`` are the addresses of llvmlite's C functions
 *   (LLVMPY_*, in the order of LLVM_FUNCTIONS below; llvm_worker checks their declared types).
 *   Called through ctypes each of them would hand the GIL back and take it again, waiting up
 *   to Python's switch interval (5 ms) each time another thread runs Python: here the GIL is
 *   released once for the whole job.
 *
 * - deferred_entry(wait): Numba's dispatcher calls a compiled signature's entry as a C
 *   function of (self, args, kwargs), so this is one. Its self is a list [wait, entry]: at the
 *   first call ``wait()`` (which waits for the code and returns Numba's entry) fills ``entry``;
 *   every call is passed on to it.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdbool.h>

/* llvmlite's C functions (its ffi directory), as llvmlite declares them to ctypes. */
typedef void *(*context_create_fn)(void);
typedef void (*context_dispose_fn)(void *);
typedef void *(*parse_bitcode_fn)(void *, const char *, size_t, char **);
typedef void (*run_passes_fn)(void *, void *, void *);
typedef bool (*verify_fn)(void *, char **);
typedef void (*write_bitcode_fn)(void *, const char **, size_t *);
typedef void *(*emit_fn)(void *, void *, int, const char **);
typedef const void *(*buffer_start_fn)(void *);
typedef size_t (*buffer_size_fn)(void *);
typedef void (*dispose_fn)(void *);
typedef void (*dispose_string_fn)(const char *);

enum { CONTEXT_CREATE, CONTEXT_DISPOSE, PARSE_BITCODE, RUN_PASSES, VERIFY, WRITE_BITCODE, EMIT,
       BUFFER_START, BUFFER_SIZE, DISPOSE_BUFFER, DISPOSE_MODULE, DISPOSE_STRING, N_FUNCTIONS };

static PyObject *
compile(PyObject *module, PyObject *args)
{
    PyObject *functions;
    Py_buffer bitcode;
    unsigned long long manager, builder, machine;
    if (!PyArg_ParseTuple(args, "O!y*KKK", &PyTuple_Type, &functions, &bitcode, &manager,
                          &builder, &machine))
        return NULL;
    void *fn[N_FUNCTIONS];
    if (PyTuple_GET_SIZE(functions) != N_FUNCTIONS) {
        PyBuffer_Release(&bitcode);
        return PyErr_Format(PyExc_ValueError, "%d functions expected", N_FUNCTIONS);
    }
    for (int i = 0; i < N_FUNCTIONS; i++) {
        fn[i] = PyLong_AsVoidPtr(PyTuple_GET_ITEM(functions, i));
        if (fn[i] == NULL) {
            PyBuffer_Release(&bitcode);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "a null function");
            return NULL;
        }
    }
    const char *failed = NULL;  /* what failed, and LLVM's message */
    char *message = NULL;
    const char *optimized = NULL;
    size_t optimized_size = 0;
    void *object = NULL;

    Py_BEGIN_ALLOW_THREADS
    void *context = ((context_create_fn)fn[CONTEXT_CREATE])();
    void *llvm_module = ((parse_bitcode_fn)fn[PARSE_BITCODE])(
        context, (const char *)bitcode.buf, (size_t)bitcode.len, &message);
    if (llvm_module == NULL)
        failed = "parsing";
    else {
        ((run_passes_fn)fn[RUN_PASSES])((void *)manager, llvm_module, (void *)builder);
        if (((verify_fn)fn[VERIFY])(llvm_module, &message))
            failed = "verifying";
        else {
            if (message != NULL) {  /* (LLVM writes one for a sound module too) */
                ((dispose_string_fn)fn[DISPOSE_STRING])(message);
                message = NULL;
            }
            ((write_bitcode_fn)fn[WRITE_BITCODE])(llvm_module, &optimized, &optimized_size);
            object = ((emit_fn)fn[EMIT])((void *)machine, llvm_module, 1,
                                         (const char **)&message);
            if (object == NULL)
                failed = "emitting code";
        }
        ((dispose_fn)fn[DISPOSE_MODULE])(llvm_module);
    }
    ((context_dispose_fn)fn[CONTEXT_DISPOSE])(context);
    Py_END_ALLOW_THREADS

    PyBuffer_Release(&bitcode);
    PyObject *result = NULL;
    if (failed != NULL)
        PyErr_Format(PyExc_RuntimeError, "LLVM %s: %s", failed,
                     message != NULL ? message : "failed");
    else if (optimized == NULL)
        PyErr_SetString(PyExc_MemoryError, "LLVM wrote no bitcode");
    else
        result = Py_BuildValue(
            "y#y#", optimized, (Py_ssize_t)optimized_size,
            (const char *)((buffer_start_fn)fn[BUFFER_START])(object),
            (Py_ssize_t)((buffer_size_fn)fn[BUFFER_SIZE])(object));
    if (message != NULL)
        ((dispose_string_fn)fn[DISPOSE_STRING])(message);
    if (optimized != NULL)
        ((dispose_string_fn)fn[DISPOSE_STRING])(optimized);
    if (object != NULL)
        ((dispose_fn)fn[DISPOSE_BUFFER])(object);
    return result;
}

static PyObject *
deferred_call(PyObject *cell, PyObject *args, PyObject *kws)
{
    PyObject *entry = PyList_GET_ITEM(cell, 1);
    if (entry == Py_None) {
        entry = PyObject_CallNoArgs(PyList_GET_ITEM(cell, 0));
        if (entry == NULL)
            return NULL;
        Py_INCREF(entry);
        if (PyList_SetItem(cell, 1, entry) < 0) {  /* (steals one reference) */
            Py_DECREF(entry);
            return NULL;
        }
    }
    else
        Py_INCREF(entry);
    PyObject *result = PyObject_Call(entry, args, kws);
    Py_DECREF(entry);
    return result;
}

static PyMethodDef deferred_def = {
    "deferred_entry", (PyCFunction)(void (*)(void))deferred_call, METH_VARARGS | METH_KEYWORDS,
    "A compiled function's entry point whose code is still being compiled."};

static PyObject *
deferred_entry(PyObject *module, PyObject *wait)
{
    PyObject *cell = PyList_New(2);
    if (cell == NULL)
        return NULL;
    Py_INCREF(wait);
    PyList_SET_ITEM(cell, 0, wait);
    Py_INCREF(Py_None);
    PyList_SET_ITEM(cell, 1, Py_None);
    PyObject *entry = PyCFunction_NewEx(&deferred_def, cell, NULL);
    Py_DECREF(cell);
    return entry;
}

static PyMethodDef module_methods[] = {
    {"compile", compile, METH_VARARGS,
     "compile(functions, bitcode, manager, builder, machine) -> (optimised bitcode, object"
     " code), the GIL released throughout."},
    {"deferred_entry", deferred_entry, METH_O,
     "deferred_entry(wait): an entry point for Numba's dispatcher that calls the entry wait()"
     " returns (called once, at the first call)."},
    {NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_llvm_worker",
    "The C level of backends/cpu/llvm_worker.py.", -1, module_methods,
};

PyMODINIT_FUNC
PyInit__llvm_worker(void)
{
    PyObject *module = PyModule_Create(&module_def);
    if (module != NULL && PyModule_AddIntConstant(module, "N_FUNCTIONS", N_FUNCTIONS) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
