/* rows.cl: moving whole rows of any model array (model.c), whatever it holds: rows are
 * ROW_U16 16-bit words wide (every array of the schema has an even number of bytes a row). */

/* dst[offsets[i]] = src[i] for kept rows; rows are ROW_U16 16-bit words wide */
__kernel void gather_rows(int n, __global const ushort *src, __global ushort *dst, __global const uint *keep,
                          __global const uint *offsets, int row_u16)
{
    size_t t = get_global_id(0);
    size_t i = t / (size_t)row_u16, k = t % (size_t)row_u16;
    if (i >= (size_t)n || !keep[i]) return;
    dst[(size_t)offsets[i] * row_u16 + k] = src[t];
}

/* row to[s] <- row src_of[s] for COUNT rows: to[s] = first + s, or dst_of[s] when first < 0 */
__kernel void rows_copy(int count, __global const uint *src_of, __global const uint *dst_of, int first,
                        __global ushort *a, int row_u16)
{
    size_t t = get_global_id(0);
    size_t s = t / (size_t)row_u16, k = t % (size_t)row_u16;
    if (s >= (size_t)count) return;
    size_t to = first >= 0 ? (size_t)first + s : dst_of[s];
    a[to * row_u16 + k] = a[(size_t)src_of[s] * row_u16 + k];
}

/* row to[s] <- zero bits for COUNT rows (to[s] as rows_copy has it) */
__kernel void rows_zero(int count, __global const uint *dst_of, int first, __global ushort *a, int row_u16)
{
    size_t t = get_global_id(0);
    size_t s = t / (size_t)row_u16, k = t % (size_t)row_u16;
    if (s >= (size_t)count) return;
    size_t to = first >= 0 ? (size_t)first + s : dst_of[s];
    a[to * row_u16 + k] = 0;
}

/* column COL (ELEM_U16 words a value) of N rows <- zero bits */
__kernel void column_zero(int n, __global ushort *a, int row_u16, int col, int elem_u16)
{
    size_t t = get_global_id(0);
    size_t i = t / (size_t)elem_u16, k = t % (size_t)elem_u16;
    if (i >= (size_t)n) return;
    a[i * row_u16 + (size_t)col * elem_u16 + k] = 0;
}
