/* every test: X(function, group) */
X(test_scan_and_sort, "cl")
X(test_raster_forward_random, "cl")
X(test_raster_forward_edge_cases, "cl")
X(test_grad_classic, "cl")
X(test_grad_mip, "cl")
X(test_grad_fp16_sh, "cl")
X(test_grad_deterministic, "cl")
X(test_grad_cas_atomics, "cl")
