/* radix_sort.cl: portable device scan and LSD radix sort of (ulong key, uint value) pairs,
 * 4 bits per pass, only over the bits in use (brush-style count / scan / scatter). A work-
 * group of SORT_WG items handles a block of SORT_WG * SORT_IPT keys; within each chunk of
 * SORT_WG keys a stable local split by the 4 digit bits gives each key its rank. */
#define SORT_WG 256
#define SORT_IPT 4
#define SORT_BLOCK (SORT_WG * SORT_IPT)

/* inclusive Hillis-Steele scan of one value per item over SORT_WG items */
inline uint wg_scan_inclusive(uint v, __local uint *buf)
{
    int lid = get_local_id(0);
    buf[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = 1; off < SORT_WG; off <<= 1) {
        uint add = lid >= off ? buf[lid - off] : 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        buf[lid] += add;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    uint r = buf[lid];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

/* Exclusive scan, in place, of each block of SORT_BLOCK values at data + off; block totals
 * to sums + sums_off. */
__kernel void scan_block(__global uint *data, uint off, uint n, __global uint *sums, uint sums_off)
{
    __local uint buf[SORT_WG];
    int lid = get_local_id(0);
    size_t base = (size_t)get_group_id(0) * SORT_BLOCK + (size_t)lid * SORT_IPT;
    uint v[SORT_IPT], sum = 0;
    for (int k = 0; k < SORT_IPT; k++) {
        v[k] = base + k < n ? data[off + base + k] : 0u;
        sum += v[k];
    }
    uint incl = wg_scan_inclusive(sum, buf);
    uint run = incl - sum;
    for (int k = 0; k < SORT_IPT; k++) {
        if (base + k < n) data[off + base + k] = run;
        run += v[k];
    }
    if (lid == SORT_WG - 1) sums[sums_off + get_group_id(0)] = incl;
}

__kernel void scan_add(__global uint *data, uint off, uint n, __global const uint *sums, uint sums_off)
{
    size_t i = get_global_id(0);
    if (i >= n) return;
    data[off + i] += sums[sums_off + i / SORT_BLOCK];
}

/* total = exclusive[n-1] + value[n-1] (0 when n == 0) */
__kernel void scan_total(__global const uint *excl, __global const uint *vals, uint n, __global uint *total)
{
    if (get_global_id(0) == 0) total[0] = n ? excl[n - 1] + vals[n - 1] : 0u;
}

/* Per-block digit histogram: hist[digit * nblocks + block]. */
__kernel void radix_count(__global const ulong *keys, uint n, uint shift, __global uint *hist)
{
    __local uint cnt[16];
    int lid = get_local_id(0);
    uint nblocks = get_num_groups(0), b = get_group_id(0);
    if (lid < 16) cnt[lid] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < SORT_IPT; k++) {
        size_t i = (size_t)b * SORT_BLOCK + (size_t)k * SORT_WG + lid;
        if (i < n) atomic_inc(&cnt[(uint)(keys[i] >> shift) & 15u]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 16) hist[lid * nblocks + b] = cnt[lid];
}

/* Stable scatter by digit using the exclusively scanned histogram. */
__kernel void radix_scatter(__global const ulong *keys_in, __global const uint *vals_in, __global ulong *keys_out,
                            __global uint *vals_out, uint n, uint shift, __global const uint *hist_scanned)
{
    __local ulong lk[2][SORT_WG];
    __local uint lv[2][SORT_WG];
    __local uint scan_buf[SORT_WG];
    __local uint base[16], ccount[16], cstart[16];
    int lid = get_local_id(0);
    uint nblocks = get_num_groups(0), b = get_group_id(0);
    if (lid < 16) base[lid] = hist_scanned[lid * nblocks + b];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < SORT_IPT; k++) {
        size_t i = (size_t)b * SORT_BLOCK + (size_t)k * SORT_WG + lid;
        int valid = i < n;
        ulong key = valid ? keys_in[i] : 0ul;
        uint val = valid ? vals_in[i] : 0u;
        uint d = valid ? (uint)(key >> shift) & 15u : 15u;
        if (lid < 16) ccount[lid] = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (valid) atomic_inc(&ccount[d]);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0) {
            uint s = 0;
            for (int j = 0; j < 16; j++) {
                cstart[j] = s;
                s += ccount[j];
            }
        }
        /* stable local sort of the chunk by the digit: 4 one-bit splits (invalid keys carry
           digit 15 and sit after every valid key, so ranks of valid keys are unaffected) */
        int pos = lid, cur = 0;
        uint my_d = d, valid_bits = (uint)valid;
        lk[0][lid] = key;
        lv[0][lid] = val | 0u;
        for (int bit = 0; bit < 4; bit++) {
            uint f = (my_d >> bit) & 1u;
            uint incl = wg_scan_inclusive(f, scan_buf);
            uint ones_before = incl - f;
            /* total ones = inclusive value of the last item */
            if (lid == SORT_WG - 1) scan_buf[0] = incl;
            barrier(CLK_LOCAL_MEM_FENCE);
            uint total1 = scan_buf[0];
            barrier(CLK_LOCAL_MEM_FENCE);
            int np = f ? (int)(SORT_WG - total1 + ones_before) : (int)(pos - ones_before);
            lk[cur ^ 1][np] = lk[cur][pos];
            lv[cur ^ 1][np] = lv[cur][pos];
            /* carry the digit and validity along through the scan buffer in the next round */
            barrier(CLK_LOCAL_MEM_FENCE);
            scan_buf[np] = my_d | (valid_bits << 8);
            barrier(CLK_LOCAL_MEM_FENCE);
            uint packed = scan_buf[pos];
            my_d = packed & 255u;
            valid_bits = packed >> 8;
            barrier(CLK_LOCAL_MEM_FENCE);
            cur ^= 1;
        }
        /* item lid now holds the element at sorted position lid */
        if (valid_bits) {
            uint rank = (uint)lid - cstart[my_d];
            uint dst = base[my_d] + rank;
            keys_out[dst] = lk[cur][lid];
            vals_out[dst] = lv[cur][lid];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < 16) base[lid] += ccount[lid];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
