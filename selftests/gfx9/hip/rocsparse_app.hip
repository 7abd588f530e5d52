// SPDX-License-Identifier: GPL-2.0
/*
 * Debian's rocSPARSE (librocsparse0 5.3.0) on kfdsim: a CSR SpMV,
 * y = alpha * A * x + beta * y, through rocsparse_scsrmv() (and
 * rocsparse_dcsrmv() with the argument "double") on a random sparse matrix,
 * run by the library's own gfx906 code object and compared with the same
 * product computed here on the CPU.
 *
 * Two matrices per precision:
 *  - integer-valued entries in [-8, 8], x and y likewise, alpha 2, beta -3:
 *    every partial sum is an integer of magnitude below 2^24, so it is exact
 *    in binary32 in any summation order and the results must be equal;
 *  - real entries in [-1, 1), alpha 1.5, beta 0.5: the library sums a row in
 *    an order of its own (lanes of a wave, then a tree), so the result may
 *    differ from the CPU's. Any order of summing k terms has an error of at
 *    most gamma_k * sum |terms| with gamma_k = k u / (1 - k u) (Higham,
 *    "Accuracy and Stability of Numerical Algorithms", 4.2); the test allows
 *    twice that bound with k = the row's nonzeros + 2 (the alpha and beta
 *    terms), computed in binary64 (long double for the f64 product).
 * Rows are 0 to 40 nonzeros long, some empty, some long enough for the
 * library's vector kernel to use several lanes per row.
 *
 * Prints "ROCSPARSE OK" and exits 0 when every row passes.
 */
#include <hip/hip_runtime.h>
#include <rocsparse/rocsparse.h>
#include <math.h>
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x) do { hipError_t e = (x); if (e) { printf("FAIL %s: %s\n", #x, hipGetErrorString(e)); exit(1); } } while (0)
#define CS(x) do { rocsparse_status s = (x); if (s != rocsparse_status_success) { printf("FAIL %s: rocsparse status %d\n", #x, (int)s); exit(1); } } while (0)

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

struct csr {
	int m, n, nnz;
	int *row_ptr, *col;
	double *val;	/* the entries; each precision rounds them to T */
};

static void make_csr(struct csr *a, int m, int n, int integer)
{
	int cap = m * 40 + 1, k = 0;

	a->m = m;
	a->n = n;
	a->row_ptr = (int *)malloc((m + 1) * sizeof(int));
	a->col = (int *)malloc(cap * sizeof(int));
	a->val = (double *)malloc(cap * sizeof(double));
	for (int r = 0; r < m; r++) {
		int len = rnd() % 8 == 0 ? 0 : rnd() % 41;
		int c = rnd() % 4;

		a->row_ptr[r] = k;
		for (int j = 0; j < len && c < n; j++) {
			a->col[k] = c;
			if (integer)
				a->val[k] = (double)((int)(rnd() % 17) - 8);
			else
				a->val[k] = ((int)(rnd() % 65536) - 32768) / 32768.0;
			k++;
			c += 1 + rnd() % (2 * n / 41 + 1);
		}
	}
	a->row_ptr[m] = k;
	a->nnz = k;
}

static double vec_val(int integer)
{
	if (integer)
		return (double)((int)(rnd() % 17) - 8);
	return ((int)(rnd() % 65536) - 32768) / 32768.0;
}

static rocsparse_status csrmv(rocsparse_handle h, const struct csr *a,
			      const float *alpha, rocsparse_mat_descr descr,
			      const float *val, const int *rp, const int *ci,
			      const float *x, const float *beta, float *y)
{
	return rocsparse_scsrmv(h, rocsparse_operation_none, a->m, a->n,
				a->nnz, alpha, descr, val, rp, ci, nullptr, x,
				beta, y);
}

static rocsparse_status csrmv(rocsparse_handle h, const struct csr *a,
			      const double *alpha, rocsparse_mat_descr descr,
			      const double *val, const int *rp, const int *ci,
			      const double *x, const double *beta, double *y)
{
	return rocsparse_dcsrmv(h, rocsparse_operation_none, a->m, a->n,
				a->nnz, alpha, descr, val, rp, ci, nullptr, x,
				beta, y);
}

/* One SpMV in precision T; returns the number of rows that fail. */
template <typename T>
static int spmv_case(rocsparse_handle h, rocsparse_mat_descr descr,
		     int integer, const char *name)
{
	const int m = 3000, n = 2000;
	const T alpha = integer ? 2 : 1.5, beta = integer ? -3 : 0.5;
	const long double u = sizeof(T) == 4 ? FLT_EPSILON / 2 : DBL_EPSILON / 2;
	struct csr a;
	T *val, *x, *y, *got, *dval, *dx, *dy;
	int *drp, *dci, bad = 0;

	make_csr(&a, m, n, integer);
	val = (T *)malloc(a.nnz * sizeof(T) + 1);
	x = (T *)malloc(n * sizeof(T));
	y = (T *)malloc(m * sizeof(T));
	got = (T *)malloc(m * sizeof(T));
	for (int k = 0; k < a.nnz; k++)
		val[k] = (T)a.val[k];
	for (int j = 0; j < n; j++)
		x[j] = (T)vec_val(integer);
	for (int r = 0; r < m; r++)
		y[r] = (T)vec_val(integer);

	CK(hipMalloc(&dval, a.nnz * sizeof(T) + 1));
	CK(hipMalloc(&drp, (m + 1) * sizeof(int)));
	CK(hipMalloc(&dci, a.nnz * sizeof(int) + 1));
	CK(hipMalloc(&dx, n * sizeof(T)));
	CK(hipMalloc(&dy, m * sizeof(T)));
	CK(hipMemcpy(dval, val, a.nnz * sizeof(T), hipMemcpyHostToDevice));
	CK(hipMemcpy(drp, a.row_ptr, (m + 1) * sizeof(int),
		     hipMemcpyHostToDevice));
	CK(hipMemcpy(dci, a.col, a.nnz * sizeof(int), hipMemcpyHostToDevice));
	CK(hipMemcpy(dx, x, n * sizeof(T), hipMemcpyHostToDevice));
	CK(hipMemcpy(dy, y, m * sizeof(T), hipMemcpyHostToDevice));
	CS(csrmv(h, &a, &alpha, descr, dval, drp, dci, dx, &beta, dy));
	CK(hipDeviceSynchronize());
	CK(hipMemcpy(got, dy, m * sizeof(T), hipMemcpyDeviceToHost));

	for (int r = 0; r < m; r++) {
		long double s = 0, mag = 0, want, err, bound;
		int k = a.row_ptr[r + 1] - a.row_ptr[r] + 2;

		for (int i = a.row_ptr[r]; i < a.row_ptr[r + 1]; i++) {
			s += (long double)val[i] * x[a.col[i]];
			mag += fabsl((long double)val[i] * x[a.col[i]]);
		}
		want = (long double)alpha * s + (long double)beta * y[r];
		mag = fabsl((long double)alpha) * mag +
		      fabsl((long double)beta * y[r]);
		err = fabsl((long double)got[r] - want);
		bound = integer ? 0 : 2 * (k * u / (1 - k * u)) * mag;
		if (integer && got[r] != (T)want)
			err = 1;
		if (err > bound && bad++ < 5)
			printf("%s row %d: got %.17Lg want %.17Lg (bound %Lg)\n",
			       name, r, (long double)got[r], want, bound);
	}
	printf("%s: %d x %d, %d nonzeros, %d rows wrong\n", name, m, n, a.nnz,
	       bad);

	CK(hipFree(dval));
	CK(hipFree(drp));
	CK(hipFree(dci));
	CK(hipFree(dx));
	CK(hipFree(dy));
	free(val);
	free(x);
	free(y);
	free(got);
	free(a.row_ptr);
	free(a.col);
	free(a.val);
	return bad;
}

int main(int argc, char **argv)
{
	int with_double = argc > 1 && !strcmp(argv[1], "double");
	rocsparse_handle h;
	rocsparse_mat_descr descr;
	int bad = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	CS(rocsparse_create_handle(&h));
	CS(rocsparse_create_mat_descr(&descr));
	bad += spmv_case<float>(h, descr, 1, "scsrmv integer");
	bad += spmv_case<float>(h, descr, 0, "scsrmv real");
	if (with_double) {
		bad += spmv_case<double>(h, descr, 1, "dcsrmv integer");
		bad += spmv_case<double>(h, descr, 0, "dcsrmv real");
	}
	CS(rocsparse_destroy_mat_descr(descr));
	CS(rocsparse_destroy_handle(h));
	printf("%s\n", bad ? "ROCSPARSE WRONG" : "ROCSPARSE OK");
	return bad ? 1 : 0;
}
