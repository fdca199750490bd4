/* Using the cablesim batched solvers on their own (no simulator): solve a batch of
 * tridiagonal systems and a batch of tree (Hines) systems on the CPU, and on the GPU when the
 * library has CUDA and the machine a GPU. Build against an installed cablesim_solver:
 *   cmake:      find_package(cablesim_solver) ... target_link_libraries(app cablesim::cablesim_solver)
 *   pkg-config: cc app.c $(pkg-config --cflags --libs cablesim_solver)
 * Prints the largest difference between the CPU and GPU solutions and exits non-zero when a
 * solution is wrong. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cs_hines_gpu.h>
#include <cs_solver.h>
#include <cs_thomas_gpu.h>

enum { NSYS = 1000, N = 64 };

int main(void) {
    /* --- tridiagonal: -x[i-1] + 4 x[i] - x[i+1] = 2 has the solution x = 1 away from the ends */
    size_t m = (size_t)NSYS * N;
    double *a = malloc(m * sizeof *a), *b = malloc(m * sizeof *b), *c = malloc(m * sizeof *c);
    double *d = malloc(m * sizeof *d), *d_gpu = malloc(m * sizeof *d_gpu), *b2 = malloc(m * sizeof *b2);
    double *c2 = malloc(m * sizeof *c2);
    for (size_t k = 0; k < m; ++k) {
        size_t i = k % N;
        a[k] = -1.0; c[k] = -1.0; b[k] = 4.0;
        d[k] = (i == 0 || i == N - 1) ? 3.0 : 2.0; /* exact solution: all ones */
        d_gpu[k] = d[k]; b2[k] = b[k]; c2[k] = c[k];
    }
    cs_solver_status st = cs_thomas_solve_serial(NSYS, N, a, b, c, d); /* b, c are workspace */
    if (st != CS_SOLVER_OK) { fprintf(stderr, "thomas: %s\n", cs_solver_status_string(st)); return 1; }
    double err = 0;
    for (size_t k = 0; k < m; ++k) err = fmax(err, fabs(d[k] - 1.0));
    printf("thomas cpu: max |x - 1| = %.3g\n", err);
    if (err > 1e-12) return 1;
    st = cs_thomas_gpu_solve_d(CS_THOMAS_GPU_AUTO, NSYS, N, a, b2, c2, d_gpu, CS_THOMAS_GPU_HOST_PTRS);
    if (st == CS_SOLVER_OK) {
        double diff = 0;
        for (size_t k = 0; k < m; ++k) diff = fmax(diff, fabs(d_gpu[k] - d[k]));
        printf("thomas gpu: max |gpu - cpu| = %.3g\n", diff);
        if (diff > 1e-12) return 1;
    } else {
        printf("thomas gpu: %s (%s)\n", cs_solver_status_string(st), cs_thomas_gpu_last_error()); /* no CUDA or GPU */
    }

    /* --- Hines: a batch of binary trees; rows in tree order, p = global parent row */
    int offset[NSYS + 1], *p = malloc(m * sizeof *p);
    double *hd = malloc(m * sizeof *hd), *u = malloc(m * sizeof *u), *rhs = malloc(m * sizeof *rhs);
    for (int s = 0; s <= NSYS; ++s) offset[s] = s * N;
    for (size_t k = 0; k < m; ++k) {
        int i = (int)(k % N), first = (int)(k - (size_t)i);
        p[k] = i == 0 ? -1 : first + (i - 1) / 2;
        hd[k] = 4.0; u[k] = -1.0; rhs[k] = 1.0;
    }
    double *hd2 = malloc(m * sizeof *hd2), *rhs2 = malloc(m * sizeof *rhs2);
    for (size_t k = 0; k < m; ++k) { hd2[k] = hd[k]; rhs2[k] = rhs[k]; }
    st = cs_hines_solve_serial(NSYS, offset, p, hd, u, rhs);
    if (st != CS_SOLVER_OK) { fprintf(stderr, "hines: %s\n", cs_solver_status_string(st)); return 1; }
    printf("hines cpu: x[0] = %.15g\n", rhs[0]);
    cs_hines_plan *plan = NULL;
    st = cs_hines_gpu_plan_create(NSYS, offset, p, NULL, &plan); /* NULL options: "auto" */
    if (st == CS_SOLVER_OK) st = cs_hines_gpu_solve_d(plan, hd2, u, rhs2);
    if (st == CS_SOLVER_OK) {
        double diff = 0;
        for (size_t k = 0; k < m; ++k) diff = fmax(diff, fabs(rhs2[k] - rhs[k]) / fabs(rhs[k]));
        printf("hines gpu (%s): max relative |gpu - cpu| = %.3g\n", cs_hines_gpu_plan_variant(plan), diff);
        if (diff > 1e-12) return 1;
    } else {
        printf("hines gpu: %s (%s)\n", cs_solver_status_string(st), cs_hines_gpu_last_error());
    }
    cs_hines_gpu_plan_destroy(plan);
    free(a); free(b); free(c); free(d); free(d_gpu); free(b2); free(c2);
    free(p); free(hd); free(u); free(rhs); free(hd2); free(rhs2);
    return 0;
}
