/* The C level of a staged function's call (runtime/call_slot.py says why it exists).
 *
 * Two types:
 *
 * - Base: the base class of StagedFunction. Its tp_call runs the function's fast path, the
 *   object in its `_fast` slot, and calls `self._call(*args, **kwargs)` (the full path, in
 *   Python) when there is none, when keywords are given, or when the fast path returns MISS.
 *   An exception leaving the fast path goes to `self._error_hook(e)` first, as on the full path.
 *   The fast path is either a Plan (below) or a Python function of the argument tuple
 *   (runtime/fast_calls.py builds both).
 *
 * - Plan: a check-and-run for one trace's compiled entry point (Numba's wrapper, which unboxes
 *   each argument by its parameter's type without testing it). Each argument is tested here
 *   against its parameter: its exact type, and for an array its dtype (by identity), rank,
 *   known sizes and the flags Numba's typing tells signatures apart by (layout, alignment,
 *   writability). Values the trace reads through objects (a model's weights: attributes of
 *   `self` or of an argument) are read and tested the same way and passed after the
 *   arguments; the trace's guards on Python values read so (`self.lr == 0.1`) are tested too. NumPy's error state must be the one last found acceptable. Then the entry
 *   runs, and the result is finished as the full path finishes it. Where a test fails, its
 *   fallback (the Python fast path, which covers other layouts) takes the call.
 *
 * NumPy's headers are used for the array object's layout only (PyArray_NDIM...: fields read in
 * line); no function of NumPy's C API is called, so no import_array().
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/ndarraytypes.h>

static PyObject *MISS;          /* what a fast path returns for arguments it does not cover */
static int eager_engaged = 0;   /* config.EAGER engaged: the full path decides every call */
static PyObject *str_call;      /* "_call" */
static PyObject *str_used;      /* "used" */
static PyObject *str_error_hook;  /* "_error_hook" */
static PyObject *empty_tuple;

/* ---------------------------------------------------------------- Plan */

enum { PASS_AS_IS = 0, PASS_SCALAR = 1 };  /* how an argument is passed: as it is, or a[()] */
enum { FINISH_NONE, FINISH_FIRST, FINISH_ARGUMENT, FINISH_SCALAR, FINISH_CALL };

typedef struct {
    PyTypeObject *type;      /* the exact type */
    PyObject *dtype;         /* an array's dtype (compared by identity), else NULL */
    int ndim;
    int flags_mask, flags_want;
    int pass;
    npy_intp *sizes;         /* ndim entries for an array, -1 where any size goes */
    npy_intp itemsize;       /* an array's dtype's */
    char kind;               /* an array's dtype's kind ('f', 'i', 'u', 'b', ...) */
    PyObject *equals;        /* else NULL: the value must == this (a Python number, a str) */
    PyObject *contains;      /* else NULL: whether the value (a dict) holds this key... */
    int contains_wanted;     /* ...must be this */
} Check;

typedef struct {             /* a value read through an object: a model's weight */
    PyObject *root;          /* the object the reads start from, or NULL: an argument's */
    Py_ssize_t argument;
    PyObject *attributes;    /* a tuple of str, read in turn */
    Check check;
    int passed;              /* whether it is passed to the entry, after the arguments */
} Read;

typedef struct {
    PyObject_HEAD
    Py_ssize_t nargs, nreads, npassed, nwritten;
    Py_ssize_t *written;     /* the arguments the function writes into */
    Check *checks;
    Read *reads;
    PyObject *specs;         /* the tuples the checks and reads were made from (kept) */
    PyObject *entry;         /* the compiled entry point */
    PyObject *failed;        /* failed(e): the exception to raise for e */
    PyObject *concrete;      /* its `used` is set by each run */
    int finish;
    Py_ssize_t finish_argument;
    PyObject *finish_with;   /* FINISH_SCALAR: the scalar type; FINISH_CALL: finish(results) */
    PyObject *fp_current;    /* fp_state.current */
    PyObject *fp_accepted;   /* fp_state.accepted (a list of one) */
    PyObject *fallback;      /* called with the argument tuple where a test fails, or None */
} Plan;

static int
Plan_traverse(Plan *self, visitproc visit, void *arg)
{
    Py_VISIT(self->specs);
    Py_VISIT(self->entry);
    Py_VISIT(self->failed);
    Py_VISIT(self->concrete);
    Py_VISIT(self->finish_with);
    Py_VISIT(self->fp_current);
    Py_VISIT(self->fp_accepted);
    Py_VISIT(self->fallback);
    return 0;
}

static int
Plan_clear(Plan *self)
{
    Py_CLEAR(self->specs);
    Py_CLEAR(self->entry);
    Py_CLEAR(self->failed);
    Py_CLEAR(self->concrete);
    Py_CLEAR(self->finish_with);
    Py_CLEAR(self->fp_current);
    Py_CLEAR(self->fp_accepted);
    Py_CLEAR(self->fallback);
    return 0;
}

static void
Plan_dealloc(Plan *self)
{
    PyObject_GC_UnTrack(self);
    for (Py_ssize_t i = 0; self->checks != NULL && i < self->nargs; i++)
        PyMem_Free(self->checks[i].sizes);
    for (Py_ssize_t i = 0; self->reads != NULL && i < self->nreads; i++)
        PyMem_Free(self->reads[i].check.sizes);
    PyMem_Free(self->checks);
    PyMem_Free(self->reads);
    PyMem_Free(self->written);
    Plan_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Fills `c` from (type, dtype or None, ndim, flags_mask, flags_want, pass, sizes, equals or
 * None, contains or None, contains_wanted), sizes a tuple of ints (-1: any); `contains` only
 * of a dict. Its objects stay owned by the tuple. */
static int
parse_check(PyObject *spec, Check *c)
{
    PyObject *kind, *dtype, *sizes, *equals, *contains;
    if (!PyArg_ParseTuple(spec, "O!OiiiiO!OOp", &PyType_Type, &kind, &dtype, &c->ndim,
                          &c->flags_mask, &c->flags_want, &c->pass, &PyTuple_Type, &sizes,
                          &equals, &contains, &c->contains_wanted))
        return -1;
    c->type = (PyTypeObject *)kind;
    c->dtype = dtype == Py_None ? NULL : dtype;
    c->equals = equals == Py_None ? NULL : equals;
    c->contains = contains == Py_None ? NULL : contains;
    if (c->contains != NULL && c->type != &PyDict_Type) {
        PyErr_SetString(PyExc_ValueError, "Plan: only a dict's keys are tested");
        return -1;
    }
    if (c->ndim < 0 || (c->dtype != NULL && PyTuple_GET_SIZE(sizes) != c->ndim)) {
        PyErr_SetString(PyExc_ValueError, "Plan: an array's sizes must be ndim long");
        return -1;
    }
    c->sizes = PyMem_Calloc(c->ndim > 0 ? c->ndim : 1, sizeof(npy_intp));
    if (c->sizes == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; c->dtype != NULL && k < c->ndim; k++) {
        c->sizes[k] = PyLong_AsSsize_t(PyTuple_GET_ITEM(sizes, k));
        if (c->sizes[k] == -1 && PyErr_Occurred())
            return -1;
    }
    if (c->dtype != NULL) {
        PyObject *itemsize = PyObject_GetAttrString(c->dtype, "itemsize");
        if (itemsize == NULL)
            return -1;
        c->itemsize = PyLong_AsSsize_t(itemsize);
        Py_DECREF(itemsize);
        if (c->itemsize == -1 && PyErr_Occurred())
            return -1;
        PyObject *kind = PyObject_GetAttrString(c->dtype, "kind");
        if (kind == NULL)
            return -1;
        const char *letter = PyUnicode_Check(kind) ? PyUnicode_AsUTF8(kind) : NULL;
        c->kind = letter != NULL ? letter[0] : 0;
        Py_DECREF(kind);
        if (letter == NULL)
            return PyErr_Occurred() ? -1 : 0;
    }
    return 0;
}

/* Fills `r` from (root or None, argument, attributes, check spec, passed). */
static int
parse_read(PyObject *spec, Read *r, Py_ssize_t nargs)
{
    PyObject *root, *check;
    int passed;
    if (!PyArg_ParseTuple(spec, "OnO!Op", &root, &r->argument, &PyTuple_Type, &r->attributes,
                          &check, &passed))
        return -1;
    r->root = root == Py_None ? NULL : root;
    r->passed = passed;
    if (r->root == NULL && (r->argument < 0 || r->argument >= nargs)) {
        PyErr_SetString(PyExc_ValueError, "Plan: a read's argument is out of range");
        return -1;
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(r->attributes); k++)
        if (!PyUnicode_Check(PyTuple_GET_ITEM(r->attributes, k))) {
            PyErr_SetString(PyExc_TypeError, "Plan: attribute names must be str");
            return -1;
        }
    return parse_check(check, &r->check);
}

/* Plan(specs, reads, written, entry, failed, concrete, finish, finish_argument, finish_with,
 *      fp_current, fp_accepted, fallback): specs, one check (parse_check) per argument;
 *      reads, one (parse_read) per value read through an object; written, the positions of
 *      the array arguments the function writes into. */
static PyObject *
Plan_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *specs, *reads, *written, *entry, *failed, *concrete, *finish_with, *fp_current;
    PyObject *fp_accepted, *fallback;
    int finish;
    Py_ssize_t finish_argument;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "Plan takes positional arguments only");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O!O!O!OOOinOOO!O", &PyTuple_Type, &specs, &PyTuple_Type,
                          &reads, &PyTuple_Type, &written, &entry, &failed, &concrete, &finish,
                          &finish_argument, &finish_with, &fp_current, &PyList_Type,
                          &fp_accepted, &fallback))
        return NULL;
    if (finish < FINISH_NONE || finish > FINISH_CALL ||
            (finish == FINISH_ARGUMENT &&
             (finish_argument < 0 || finish_argument >= PyTuple_GET_SIZE(specs))) ||
            PyList_GET_SIZE(fp_accepted) != 1) {
        PyErr_SetString(PyExc_ValueError, "Plan: bad finish or fp_accepted");
        return NULL;
    }
    Plan *self = (Plan *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->specs = PyTuple_Pack(3, specs, reads, written);
    Py_ssize_t n = PyTuple_GET_SIZE(specs), m = PyTuple_GET_SIZE(reads);
    Py_ssize_t w = PyTuple_GET_SIZE(written);
    self->checks = PyMem_Calloc(n > 0 ? n : 1, sizeof(Check));
    self->reads = PyMem_Calloc(m > 0 ? m : 1, sizeof(Read));
    self->written = PyMem_Calloc(w > 0 ? w : 1, sizeof(Py_ssize_t));
    if (self->specs == NULL || self->checks == NULL || self->reads == NULL ||
            self->written == NULL) {
        Py_DECREF(self);
        return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    }
    self->nargs = n;
    self->nreads = m;
    for (Py_ssize_t i = 0; i < n; i++)
        if (parse_check(PyTuple_GET_ITEM(specs, i), &self->checks[i]) < 0) {
            Py_DECREF(self);
            return NULL;
        }
    for (Py_ssize_t i = 0; i < m; i++) {
        if (parse_read(PyTuple_GET_ITEM(reads, i), &self->reads[i], n) < 0) {
            Py_DECREF(self);
            return NULL;
        }
        self->npassed += self->reads[i].passed;
    }
    self->nwritten = w;
    for (Py_ssize_t i = 0; i < w; i++) {
        Py_ssize_t p = PyLong_AsSsize_t(PyTuple_GET_ITEM(written, i));
        if (p < 0 || p >= n || self->checks[p].dtype == NULL) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "Plan: a written argument is not an array");
            Py_DECREF(self);
            return NULL;
        }
        self->written[i] = p;
    }
    Py_INCREF(entry); self->entry = entry;
    Py_INCREF(failed); self->failed = failed;
    Py_INCREF(concrete); self->concrete = concrete;
    self->finish = finish;
    self->finish_argument = finish_argument;
    Py_INCREF(finish_with); self->finish_with = finish_with;
    Py_INCREF(fp_current); self->fp_current = fp_current;
    Py_INCREF(fp_accepted); self->fp_accepted = fp_accepted;
    Py_INCREF(fallback); self->fallback = fallback;
    return (PyObject *)self;
}

/* Whether `value` passes check `c`. */
static inline int
passes(const Check *c, PyObject *value)
{
    if (Py_TYPE(value) != c->type)
        return 0;
    if (c->contains != NULL) {  /* (a dict's key: a str) */
        int found = PyDict_Contains(value, c->contains);
        if (found < 0)
            PyErr_Clear();
        return found == c->contains_wanted;
    }
    if (c->equals != NULL) {  /* (of an exact int, float, bool, str or a function: == cannot
                               * fail) */
        int equal = PyObject_RichCompareBool(value, c->equals, Py_EQ);
        if (equal < 0)
            PyErr_Clear();
        return equal == 1;
    }
    if (c->dtype == NULL)
        return 1;
    PyArrayObject *array = (PyArrayObject *)value;
    if ((PyObject *)PyArray_DESCR(array) != c->dtype || PyArray_NDIM(array) != c->ndim ||
            (PyArray_FLAGS(array) & c->flags_mask) != c->flags_want)
        return 0;
    const npy_intp *dims = PyArray_DIMS(array);
    for (int k = 0; k < c->ndim; k++)
        if (c->sizes[k] >= 0 && dims[k] != c->sizes[k])
            return 0;
    return 1;
}

/* Raises what failed(e) gives for the exception set now: e itself, or another in its place
 * (as `raise error from None`). */
static void
raise_failed(Plan *plan)
{
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    if (value == NULL || !PyObject_TypeCheck(value, (PyTypeObject *)PyExc_Exception)) {
        PyErr_Restore(type, value, traceback);  /* (a BaseException: as it is) */
        return;
    }
    if (traceback != NULL)
        PyException_SetTraceback(value, traceback);
    PyObject *error = PyObject_CallOneArg(plan->failed, value);
    if (error == NULL) {  /* (failed itself failed: that error) */
        Py_XDECREF(type); Py_XDECREF(value); Py_XDECREF(traceback);
        return;
    }
    if (error == value) {
        Py_DECREF(error);
        PyErr_Restore(type, value, traceback);
        return;
    }
    Py_XDECREF(type); Py_XDECREF(value); Py_XDECREF(traceback);
    PyException_SetCause(error, NULL);  /* (also sets __suppress_context__) */
    PyErr_SetObject((PyObject *)Py_TYPE(error), error);
    Py_DECREF(error);
}

/* The Python number holding the item of 0-d array `array` (of check `c`'s dtype, native byte
 * order: the dtype is tested by identity), a new reference; NULL with no error set for a kind
 * it does not make. Numba's wrapper unboxes a parameter of that dtype from it exactly (a float32
 * widened to a double and narrowed back), and makes it faster than NumPy's scalar (issue 14,
 * goal 3: a model's 0-d weights). */
static PyObject *
item_number(const Check *c, PyArrayObject *array)
{
    const char *data = PyArray_BYTES(array);
    union { float f; double d; int8_t i1; int16_t i2; int32_t i4; int64_t i8; uint8_t u1;
            uint16_t u2; uint32_t u4; uint64_t u8; } item;
    if (c->itemsize > (npy_intp)sizeof(item))
        return NULL;
    memcpy(&item, data, c->itemsize);  /* (the array may be unaligned) */
    switch (c->kind) {
    case 'f':
        return c->itemsize == 8 ? PyFloat_FromDouble(item.d)
             : c->itemsize == 4 ? PyFloat_FromDouble(item.f) : NULL;
    case 'i':
        return c->itemsize == 8 ? PyLong_FromLongLong(item.i8)
             : c->itemsize == 4 ? PyLong_FromLong(item.i4)
             : c->itemsize == 2 ? PyLong_FromLong(item.i2)
             : c->itemsize == 1 ? PyLong_FromLong(item.i1) : NULL;
    case 'u':
        return c->itemsize == 8 ? PyLong_FromUnsignedLongLong(item.u8)
             : c->itemsize == 4 ? PyLong_FromUnsignedLong(item.u4)
             : c->itemsize == 2 ? PyLong_FromLong(item.u2)
             : c->itemsize == 1 ? PyLong_FromLong(item.u1) : NULL;
    case 'b':
        return c->itemsize == 1 ? PyBool_FromLong(item.u1 != 0) : NULL;
    }
    return NULL;
}

/* What is passed to the entry for `value` (a new reference): a 0-d array given for a scalar
 * parameter as its item (a Python number, else NumPy's scalar), anything else as it is. */
static PyObject *
pass_value(const Check *c, PyObject *value)
{
    if (c->pass != PASS_SCALAR)
        return Py_NewRef(value);
    PyObject *number = item_number(c, (PyArrayObject *)value);
    if (number != NULL || PyErr_Occurred())
        return number;
    return PyObject_GetItem(value, empty_tuple);
}

/* The value `r` reads (a new reference), or NULL with no error set where a read raises an
 * Exception (an attribute gone: the Python fast path, and then the full path, say what it
 * means); NULL with the error set for a BaseException (KeyboardInterrupt: as it is). */
static PyObject *
read_value(const Read *r, PyObject *const *args)
{
    PyObject *value = Py_NewRef(r->root != NULL ? r->root : args[r->argument]);
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(r->attributes); k++) {
        PyObject *next = PyObject_GetAttr(value, PyTuple_GET_ITEM(r->attributes, k));
        Py_DECREF(value);
        if (next == NULL) {
            if (PyErr_ExceptionMatches(PyExc_Exception))
                PyErr_Clear();
            return NULL;
        }
        value = next;
    }
    return value;
}

/* The bytes `array` spans, [*low, *high): empty for an array of no items. */
static void
extent(PyArrayObject *array, npy_intp itemsize, char **low, char **high)
{
    char *start = PyArray_BYTES(array), *end = start;
    const npy_intp *dims = PyArray_DIMS(array), *strides = PyArray_STRIDES(array);
    for (int k = 0; k < PyArray_NDIM(array); k++) {
        if (dims[k] == 0) {
            *low = *high = start;
            return;
        }
        npy_intp span = (dims[k] - 1) * strides[k];
        if (span > 0)
            end += span;
        else
            start += span;
    }
    *low = start;
    *high = end + itemsize;
}

/* Whether an array the function writes into may share memory with another array argument:
 * np.may_share_memory's test (their bounds overlap). The full path runs such calls as Python. */
static int
may_alias(const Plan *plan, PyObject *const *args)
{
    for (Py_ssize_t i = 0; i < plan->nwritten; i++) {
        Py_ssize_t p = plan->written[i];
        char *low, *high;
        extent((PyArrayObject *)args[p], plan->checks[p].itemsize, &low, &high);
        for (Py_ssize_t k = 0; k < plan->nargs; k++) {
            if (k == p || plan->checks[k].dtype == NULL)  /* (0-d ones passed as scalars too:
                                                           * Python reads them after writes) */
                continue;
            char *other_low, *other_high;
            extent((PyArrayObject *)args[k], plan->checks[k].itemsize, &other_low, &other_high);
            if (low < high && other_low < other_high && low < other_high && other_low < high)
                return 1;
        }
    }
    return 0;
}

/* What `plan`'s fallback gives for `tuple`, else MISS (a new reference). */
static PyObject *
fall_back(Plan *plan, PyObject *tuple)
{
    if (plan->fallback == NULL || plan->fallback == Py_None)
        return Py_NewRef(MISS);
    return PyObject_CallOneArg(plan->fallback, tuple);
}

/* The result of `plan` for the argument tuple `tuple`: what its fallback gives (or MISS, a new
 * reference) when a test fails, NULL on error. */
static PyObject *
Plan_run(Plan *plan, PyObject *tuple)
{
    PyObject *const *args = &PyTuple_GET_ITEM(tuple, 0);
    Py_ssize_t nargs = PyTuple_GET_SIZE(tuple);
    if (plan->entry == NULL)  /* (once cleared) */
        return Py_NewRef(MISS);
    if (nargs != plan->nargs)
        return fall_back(plan, tuple);
    PyObject *state = PyObject_CallNoArgs(plan->fp_current);
    if (state == NULL)
        return NULL;
    Py_DECREF(state);  /* (compared by identity: the list holds a reference when it matters) */
    if (state != PyList_GET_ITEM(plan->fp_accepted, 0))
        return Py_NewRef(MISS);
    Py_ssize_t npassed = nargs + plan->npassed;
    PyObject *small[16];
    PyObject **passed = npassed <= 16 ? small : PyMem_Malloc(npassed * sizeof(PyObject *));
    if (passed == NULL)
        return PyErr_NoMemory();
    Py_ssize_t made = 0;  /* how many of passed hold new references */
    PyObject *results = NULL;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        const Check *c = &plan->checks[i];
        if (!passes(c, args[i])) {
            results = fall_back(plan, tuple);
            goto done;
        }
        passed[made] = pass_value(c, args[i]);
        if (passed[made] == NULL)
            goto done;
        made++;
    }
    if (plan->nwritten && may_alias(plan, args)) {
        results = fall_back(plan, tuple);
        goto done;
    }
    for (Py_ssize_t i = 0; i < plan->nreads; i++) {
        const Read *r = &plan->reads[i];
        PyObject *value = read_value(r, args);
        if (value == NULL && PyErr_Occurred())
            goto done;
        if (value == NULL || !passes(&r->check, value)) {
            Py_XDECREF(value);
            results = fall_back(plan, tuple);
            goto done;
        }
        if (r->passed) {
            passed[made] = pass_value(&r->check, value);
            Py_DECREF(value);
            if (passed[made] == NULL)
                goto done;
            made++;
        }
        else {
            Py_DECREF(value);
        }
    }
    results = PyObject_Vectorcall(plan->entry, passed, npassed, NULL);
    if (results == NULL) {
        raise_failed(plan);
        goto done;
    }
    if (PyObject_SetAttr(plan->concrete, str_used, Py_True) < 0) {
        Py_CLEAR(results);
        goto done;
    }
    PyObject *out;
    switch (plan->finish) {
    case FINISH_NONE:
        out = Py_NewRef(Py_None);
        break;
    case FINISH_ARGUMENT:
        out = Py_NewRef(args[plan->finish_argument]);
        break;
    case FINISH_FIRST:
    case FINISH_SCALAR:
        if (!PyTuple_Check(results) || PyTuple_GET_SIZE(results) < 1) {
            PyErr_SetString(PyExc_SystemError, "autostage: compiled code returned no tuple");
            out = NULL;
            break;
        }
        out = PyTuple_GET_ITEM(results, 0);
        out = plan->finish == FINISH_FIRST ? Py_NewRef(out)
                                           : PyObject_CallOneArg(plan->finish_with, out);
        break;
    default:
        out = PyObject_CallOneArg(plan->finish_with, results);
    }
    Py_DECREF(results);
    results = out;
done:
    for (Py_ssize_t i = 0; i < made; i++)
        Py_DECREF(passed[i]);
    if (passed != small)
        PyMem_Free(passed);
    return results;
}

/* plan(arguments): as a Python fast path is called, with a call's arguments (a sequence). */
static PyObject *
Plan_call(Plan *self, PyObject *args, PyObject *kwargs)
{
    PyObject *arguments;
    if (!PyArg_ParseTuple(args, "O:Plan", &arguments))
        return NULL;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "a Plan takes no keyword arguments");
        return NULL;
    }
    PyObject *tuple = PySequence_Tuple(arguments);
    if (tuple == NULL)
        return NULL;
    PyObject *out = Plan_run(self, tuple);
    Py_DECREF(tuple);
    return out;
}

static PyObject *
Plan_get_entry(Plan *self, void *closure)
{
    return Py_NewRef(self->entry);
}

static PyObject *
Plan_get_specs(Plan *self, void *closure)
{
    return Py_NewRef(self->specs);
}

static PyObject *
Plan_get_fallback(Plan *self, void *closure)
{
    return Py_NewRef(self->fallback ? self->fallback : Py_None);
}

static PyGetSetDef Plan_getset[] = {
    {"entry", (getter)Plan_get_entry, NULL, "the compiled entry point it calls", NULL},
    {"fallback", (getter)Plan_get_fallback, NULL, "what it calls where a test fails", NULL},
    {"specs", (getter)Plan_get_specs, NULL, "what each argument is tested for", NULL},
    {NULL},
};

static PyTypeObject PlanType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "autostage.runtime._fastcall.Plan",
    .tp_basicsize = sizeof(Plan),
    .tp_dealloc = (destructor)Plan_dealloc,
    .tp_call = (ternaryfunc)Plan_call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = (traverseproc)Plan_traverse,
    .tp_clear = (inquiry)Plan_clear,
    .tp_doc = "A check-and-run of one trace's compiled entry point: plan(arguments) gives "
              "the result, or MISS for arguments it does not cover.",
    .tp_new = Plan_new,
    .tp_getset = Plan_getset,
};

/* ---------------------------------------------------------------- Base */

typedef struct {
    PyObject_HEAD
    PyObject *fast;  /* a Plan, a Python function of the argument tuple, or None/False */
} Base;

static int
Base_traverse(Base *self, visitproc visit, void *arg)
{
    Py_VISIT(self->fast);  /* (its type: visited by the subclass's traverse) */
    return 0;
}

static int
Base_clear(Base *self)
{
    Py_CLEAR(self->fast);
    return 0;
}

static void
Base_dealloc(Base *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    Base_clear(self);
    type->tp_free((PyObject *)self);
}

/* Gives the exception leaving a fast path to `self._error_hook(e)` (unless that is None), as
 * the full path gives its own: the hook adds the user's lines and filters the traceback. An
 * error of the hook's own replaces it. */
static void
report(PyObject *self)
{
    if (!PyErr_ExceptionMatches(PyExc_Exception))
        return;
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    if (traceback != NULL)
        PyException_SetTraceback(value, traceback);
    PyObject *hook = PyObject_GetAttr(self, str_error_hook);
    if (hook == NULL) {
        PyErr_Clear();
    }
    else if (hook != Py_None) {
        PyObject *done = PyObject_CallOneArg(hook, value);
        Py_DECREF(hook);
        if (done == NULL) {
            Py_XDECREF(type); Py_XDECREF(value); Py_XDECREF(traceback);
            return;
        }
        Py_DECREF(done);
    }
    else {
        Py_DECREF(hook);
    }
    Py_XDECREF(traceback);  /* (the hook may have given the exception another) */
    PyErr_Restore(type, value, PyException_GetTraceback(value));
}

static PyObject *
Base_call(Base *self, PyObject *args, PyObject *kwargs)
{
    PyObject *fast = self->fast;
    if (fast != NULL && fast != Py_None && fast != Py_False && !eager_engaged &&
            (kwargs == NULL || PyDict_GET_SIZE(kwargs) == 0)) {
        Py_INCREF(fast);  /* (a call may replace it) */
        PyObject *out = Py_IS_TYPE(fast, &PlanType) ? Plan_run((Plan *)fast, args)
                                                    : PyObject_CallOneArg(fast, args);
        Py_DECREF(fast);
        if (out == NULL)
            report((PyObject *)self);
        if (out != MISS)
            return out;  /* (the result, or NULL with the error set) */
        Py_DECREF(out);
    }
    PyObject *call = PyObject_GetAttr((PyObject *)self, str_call);
    if (call == NULL)
        return NULL;
    PyObject *out = PyObject_Call(call, args, kwargs);
    Py_DECREF(call);
    return out;
}

static PyMemberDef Base_members[] = {
    {"_fast", T_OBJECT, offsetof(Base, fast), 0,
     "the fast path: a Plan, a Python function of the argument tuple, or None/False"},
    {NULL},
};

static PyTypeObject BaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "autostage.runtime._fastcall.Base",
    .tp_basicsize = sizeof(Base),
    .tp_dealloc = (destructor)Base_dealloc,
    .tp_call = (ternaryfunc)Base_call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Calls its fast path, else self._call(*args, **kwargs).",
    .tp_traverse = (traverseproc)Base_traverse,
    .tp_clear = (inquiry)Base_clear,
    .tp_members = Base_members,
    .tp_new = PyType_GenericNew,
};

/* ---------------------------------------------------------------- module */

static PyObject *
engage_eager(PyObject *module, PyObject *unused)
{
    eager_engaged = 1;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"engage_eager", engage_eager, METH_NOARGS,
     "config.EAGER may be on from now: every call takes the full path, which decides."},
    {NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_fastcall",
    "The C level of a staged function's call (runtime/call_slot.py).", -1, module_methods,
};

PyMODINIT_FUNC
PyInit__fastcall(void)
{
    if (PyType_Ready(&PlanType) < 0 || PyType_Ready(&BaseType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    str_call = PyUnicode_InternFromString("_call");
    str_used = PyUnicode_InternFromString("used");
    str_error_hook = PyUnicode_InternFromString("_error_hook");
    empty_tuple = PyTuple_New(0);
    MISS = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    if (str_call == NULL || str_used == NULL || str_error_hook == NULL || empty_tuple == NULL || MISS == NULL ||
            PyModule_AddObjectRef(module, "MISS", MISS) < 0 ||
            PyModule_AddObjectRef(module, "Plan", (PyObject *)&PlanType) < 0 ||
            PyModule_AddObjectRef(module, "Base", (PyObject *)&BaseType) < 0 ||
            PyModule_AddIntConstant(module, "FINISH_NONE", FINISH_NONE) < 0 ||
            PyModule_AddIntConstant(module, "FINISH_FIRST", FINISH_FIRST) < 0 ||
            PyModule_AddIntConstant(module, "FINISH_ARGUMENT", FINISH_ARGUMENT) < 0 ||
            PyModule_AddIntConstant(module, "FINISH_SCALAR", FINISH_SCALAR) < 0 ||
            PyModule_AddIntConstant(module, "FINISH_CALL", FINISH_CALL) < 0 ||
            PyModule_AddIntConstant(module, "PASS_AS_IS", PASS_AS_IS) < 0 ||
            PyModule_AddIntConstant(module, "PASS_SCALAR", PASS_SCALAR) < 0 ||
            PyModule_AddIntConstant(module, "C_CONTIGUOUS", NPY_ARRAY_C_CONTIGUOUS) < 0 ||
            PyModule_AddIntConstant(module, "F_CONTIGUOUS", NPY_ARRAY_F_CONTIGUOUS) < 0 ||
            PyModule_AddIntConstant(module, "ALIGNED", NPY_ARRAY_ALIGNED) < 0 ||
            PyModule_AddIntConstant(module, "WRITEABLE", NPY_ARRAY_WRITEABLE) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
