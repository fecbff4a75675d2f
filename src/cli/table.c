/* A table of cells and its three forms, text, CSV and JSON (table.h): the output of
 * lbmc info's views of a results file. */
#include "table.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

lbmc_err lbmc_table_create(int ncols, const char *const *names, lbmc_table **out)
{
  lbmc_table *t = calloc(1, sizeof *t);
  int failed = !t;
  if (t) {
    t->ncols = ncols;
    t->col = calloc((size_t)ncols + 1, sizeof *t->col);
    failed = !t->col;
    for (int c = 0; !failed && c < ncols; c++) failed = !(t->col[c].name = strdup(names[c]));
  }
  *out = t;
  if (!failed) return LBMC_SUCCESS;
  lbmc_table_destroy(out);
  return LBMC_ERROR(LBMC_ERR_MEMORY, "out of memory for a table");
}

void lbmc_table_destroy(lbmc_table **table)
{
  lbmc_table *t = table ? *table : NULL;
  if (!t) return;
  for (long k = 0; k < t->nrows * t->ncols; k++) free(t->cell[k].s);
  for (int c = 0; t->col && c < t->ncols; c++) free(t->col[c].name);
  free(t->col);
  free(t->cell);
  free(t);
  *table = NULL;
}

lbmc_err lbmc_table_add_row(lbmc_table *t)
{
  if (t->nrows == t->cap) {
    long cap = t->cap ? 2 * t->cap : 64;
    lbmc_cell *more = realloc(t->cell, sizeof *more * (size_t)cap * (size_t)t->ncols);
    if (!more) return LBMC_ERROR(LBMC_ERR_MEMORY, "out of memory for %ld table rows", cap);
    t->cell = more;
    t->cap = cap;
  }
  memset(t->cell + t->nrows * t->ncols, 0, sizeof *t->cell * (size_t)t->ncols);
  t->nrows++;
  return LBMC_SUCCESS;
}

static lbmc_cell *lbmc_table_last(lbmc_table *t, int col)
{
  return &t->cell[(t->nrows - 1) * t->ncols + col];
}

void lbmc_table_int(lbmc_table *t, int col, long v)
{
  lbmc_cell *c = lbmc_table_last(t, col);
  c->kind = LBMC_CELL_INT;
  c->i = v;
}

void lbmc_table_real(lbmc_table *t, int col, double v)
{
  lbmc_cell *c = lbmc_table_last(t, col);
  c->kind = LBMC_CELL_REAL;
  c->x = v;
}

lbmc_err lbmc_table_text(lbmc_table *t, int col, const char *s)
{
  lbmc_cell *c = lbmc_table_last(t, col);
  free(c->s);
  c->kind = LBMC_CELL_TEXT;
  c->s = strdup(s ? s : "");
  return c->s ? LBMC_SUCCESS : LBMC_ERROR(LBMC_ERR_MEMORY, "out of memory for a table cell");
}

int lbmc_table_column(const lbmc_table *t, const char *name)
{
  for (int c = 0; c < t->ncols; c++)
    if (strcmp(t->col[c].name, name) == 0) return c;
  return -1;
}

/* ---- text ---- */

/* The text form of a cell into buf; returns buf. */
static const char *lbmc_cell_text(const lbmc_cell *c, int digits, char *buf, size_t len)
{
  switch (c->kind) {
  case LBMC_CELL_INT: snprintf(buf, len, "%ld", c->i); break;
  case LBMC_CELL_REAL:
    if (isnan(c->x))
      snprintf(buf, len, "nan");
    else
      snprintf(buf, len, "%.*g", digits > 0 ? digits : 6, c->x);
    break;
  case LBMC_CELL_TEXT: snprintf(buf, len, "%s", c->s); break;
  default: snprintf(buf, len, "-");
  }
  return buf;
}

/* Width of column c in the text form: its name or its widest cell. */
static size_t lbmc_column_width(const lbmc_table *t, int c)
{
  char buf[512];
  size_t w = strlen(t->col[c].name);
  for (long r = 0; r < t->nrows; r++) {
    size_t n =
        strlen(lbmc_cell_text(&t->cell[r * t->ncols + c], t->col[c].digits, buf, sizeof buf));
    if (n > w) w = n;
  }
  return w;
}

size_t lbmc_table_width(const lbmc_table *t)
{
  size_t w = 0;
  for (int c = 0; c < t->ncols; c++)
    if (!t->col[c].hidden) w += lbmc_column_width(t, c) + (w ? 2 : 0);
  return w;
}

/* Numbers right-aligned: a column whose cells are all integers, reals or nothing. */
static int lbmc_column_numeric(const lbmc_table *t, int c)
{
  for (long r = 0; r < t->nrows; r++)
    if (t->cell[r * t->ncols + c].kind == LBMC_CELL_TEXT) return 0;
  return 1;
}

static void lbmc_table_print_text(FILE *f, const lbmc_table *t)
{
  size_t *w = calloc((size_t)t->ncols + 1, sizeof *w);
  int *right = calloc((size_t)t->ncols + 1, sizeof *right);
  char buf[512];
  if (!w || !right) {
    free(w), free(right);
    LBMC_ERROR(LBMC_ERR_MEMORY, "out of memory printing a table");
    return;
  }
  for (int c = 0; c < t->ncols; c++) {
    w[c] = lbmc_column_width(t, c);
    right[c] = lbmc_column_numeric(t, c);
  }
  for (long r = -1; r < t->nrows; r++) {
    int first = 1;
    for (int c = 0; c < t->ncols; c++) {
      const char *text =
          r < 0 ? t->col[c].name
                : lbmc_cell_text(&t->cell[r * t->ncols + c], t->col[c].digits, buf, sizeof buf);
      int last = 1;
      if (t->col[c].hidden) continue;
      for (int d = c + 1; d < t->ncols && last; d++) last = t->col[d].hidden;
      fprintf(f, "%s%*s", first ? "" : "  ", right[c] ? (int)w[c] : -(int)(last ? 0 : w[c]), text);
      first = 0;
    }
    fputc('\n', f);
  }
  free(w);
  free(right);
}

/* ---- CSV ---- */

static void lbmc_csv_text(FILE *f, const char *s)
{
  if (!strpbrk(s, ",\"\r\n")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

/* The shortest "%.Ng" (N = 15, 16, 17) that reads back as x exactly. */
static const char *lbmc_shortest(double x, char *buf, size_t len)
{
  for (int digits = 15; digits <= 17; digits++) {
    snprintf(buf, len, "%.*g", digits, x);
    if (strtod(buf, NULL) == x) break;
  }
  return buf;
}

static void lbmc_csv_cell(FILE *f, const lbmc_cell *c)
{
  char buf[40];
  switch (c->kind) {
  case LBMC_CELL_INT: fprintf(f, "%ld", c->i); break;
  case LBMC_CELL_REAL:
    if (isnan(c->x))
      fputs("NaN", f);
    else if (isinf(c->x))
      fputs(c->x > 0 ? "inf" : "-inf", f);
    else
      fputs(lbmc_shortest(c->x, buf, sizeof buf), f);
    break;
  case LBMC_CELL_TEXT: lbmc_csv_text(f, c->s); break;
  default: break;
  }
}

static void lbmc_table_print_csv(FILE *f, const lbmc_table *t)
{
  for (int c = 0; c < t->ncols; c++) {
    if (c) fputc(',', f);
    lbmc_csv_text(f, t->col[c].name);
  }
  fputc('\n', f);
  for (long r = 0; r < t->nrows; r++) {
    for (int c = 0; c < t->ncols; c++) {
      if (c) fputc(',', f);
      lbmc_csv_cell(f, &t->cell[r * t->ncols + c]);
    }
    fputc('\n', f);
  }
}

/* ---- JSON ---- */

static json_t *lbmc_json_cell(const lbmc_cell *c)
{
  switch (c->kind) {
  case LBMC_CELL_INT: return json_integer(c->i);
  case LBMC_CELL_REAL: /* JSON has no infinity: "inf" (an infinite estimate), NaN null */
    if (isinf(c->x)) return json_string(c->x > 0 ? "inf" : "-inf");
    return isfinite(c->x) ? json_real(c->x) : json_null();
  case LBMC_CELL_TEXT: return json_string(c->s);
  default: return json_null();
  }
}

json_t *lbmc_table_json(const lbmc_table *t)
{
  json_t *rows = json_array();
  for (long r = 0; r < t->nrows; r++) {
    json_t *row = json_object();
    for (int c = 0; c < t->ncols; c++)
      json_object_set_new(row, t->col[c].name, lbmc_json_cell(&t->cell[r * t->ncols + c]));
    json_array_append_new(rows, row);
  }
  return rows;
}

void lbmc_json_print(FILE *f, json_t *value)
{
  json_dumpf(value, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
  fputc('\n', f);
  json_decref(value);
}

void lbmc_table_print(FILE *f, const lbmc_table *t, lbmc_format fmt)
{
  if (fmt == LBMC_FORMAT_CSV)
    lbmc_table_print_csv(f, t);
  else if (fmt == LBMC_FORMAT_JSON)
    lbmc_json_print(f, lbmc_table_json(t));
  else
    lbmc_table_print_text(f, t);
}

void lbmc_print_wrapped(FILE *f, const char *first, int indent, const char *text, int width)
{
  int col = fprintf(f, "%s", first), start = col; /* start: where this line's text begins */
  while (*text) {
    const size_t word = strcspn(text, " ");
    if (col > start) { /* not the first word of the line */
      if (width > 0 && col + 1 + (int)word > width) {
        fprintf(f, "\n%*s", indent, "");
        col = start = indent;
      } else {
        fputc(' ', f);
        col++;
      }
    }
    col += fprintf(f, "%.*s", (int)word, text);
    text += word;
    while (*text == ' ') text++;
  }
  fputc('\n', f);
}
