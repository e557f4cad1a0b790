/* The live instances of given classes, found in gc's list of objects in one C call
 * (runtime/staging/random_freeze.py).
 *
 * gc.get_objects() returns a list holding every object of the process, those other threads are
 * still building too. Held in Python while another thread runs, that list made a tuple being
 * built there (tuple(generator)) fail with SystemError: a tuple's size may only change while
 * nothing else refers to it. Here the list is made, filtered and released without running any
 * Python code, so no other thread runs meanwhile.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* instances_of(kinds, generations): the objects among gc.get_objects(g) for each g in
 * generations (None: all objects) whose type is one of the tuple kinds (exactly). */
static PyObject *
instances_of(PyObject *module, PyObject *args)
{
    PyObject *kinds, *generations;
    if (!PyArg_ParseTuple(args, "O!O", &PyTuple_Type, &kinds, &generations))
        return NULL;
    if (generations != Py_None && !PyTuple_Check(generations))
        return PyErr_Format(PyExc_TypeError, "generations must be a tuple or None");
    PyObject *gc = PyImport_ImportModule("gc");
    if (gc == NULL)
        return NULL;
    PyObject *get_objects = PyObject_GetAttrString(gc, "get_objects");
    Py_DECREF(gc);
    if (get_objects == NULL)
        return NULL;
    PyObject *found = PyList_New(0);
    Py_ssize_t n_calls = generations == Py_None ? 1 : PyTuple_GET_SIZE(generations);
    Py_ssize_t n_kinds = PyTuple_GET_SIZE(kinds);
    for (Py_ssize_t call = 0; found != NULL && call < n_calls; call++) {
        PyObject *objects = generations == Py_None
            ? PyObject_CallNoArgs(get_objects)
            : PyObject_CallOneArg(get_objects, PyTuple_GET_ITEM(generations, call));
        if (objects == NULL || !PyList_Check(objects)) {
            Py_XDECREF(objects);
            Py_CLEAR(found);
            break;
        }
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(objects); i++) {
            PyObject *obj = PyList_GET_ITEM(objects, i);
            for (Py_ssize_t k = 0; k < n_kinds; k++) {
                if ((PyObject *)Py_TYPE(obj) == PyTuple_GET_ITEM(kinds, k)) {
                    if (PyList_Append(found, obj) < 0)
                        Py_CLEAR(found);
                    break;
                }
            }
            if (found == NULL)
                break;
        }
        Py_DECREF(objects);
    }
    Py_DECREF(get_objects);
    return found;
}

static PyMethodDef module_methods[] = {
    {"instances_of", instances_of, METH_VARARGS,
     "instances_of(kinds, generations): the live objects (of gc's generations, None: all) whose"
     " type is in the tuple kinds, found in one C call."},
    {NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_live_objects",
    "The live instances of given classes, from gc's list in one C call.", -1, module_methods,
};

PyMODINIT_FUNC
PyInit__live_objects(void)
{
    return PyModule_Create(&module_def);
}
