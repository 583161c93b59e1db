package dev.threadpool.jmh;

import dev.threadpool.ObjLongToDoubleFunction;
import dev.threadpool.ObjLongToLongFunction;
import dev.threadpool.jmh.RecursiveShapesBench.Problem;
import dev.threadpool.jmh.RecursiveShapesBench.Quad;
import java.util.function.ObjLongConsumer;

/**
 * {@link SplitCost}'s floors: {@link RecursiveShapesBench}'s {@code fib} and {@code quadrature} exactly as ours
 * writes them (the same functions, contexts, packed {@code long}s, per-worker slots and accumulators), with the pool
 * replaced by a stand-in that does nothing a pool must do: no worker lookup, no deque, no frame, no handle check, no
 * demand check, nothing another thread could ever see. What is left is the user's own bookkeeping around a split and
 * the call through the API's shape (the half as a function, a context and a {@code long}), so a pool can cost no
 * less than this on one worker, whatever it does.
 * <ul>
 *   <li>{@link JoinFloor}: {@code join(fn, ctx, l, r)} as {@code fn.accept(ctx, l); fn.accept(ctx, r)};</li>
 *   <li>{@link ForkFloor}: {@code forkLong} / {@code forkDouble} push the half's function, context and {@code long}
 *       on a stack, {@code joinLong} / {@code joinDouble} pop and call it (the in-place half between them, as
 *       ours).</li>
 * </ul>
 * The stand-in's calls are small and C2 may inline them, and through them the user's recursion into itself: the
 * pool's join never is (PERFORMANCE_TRACKING 75), so the floor is lower than any pool's, never higher. One thread,
 * row 1 of the slots and accumulators (a worker's row). Only {@code fib} and {@code quadrature}.
 */
final class SplitFloor {
    private SplitFloor() {
    }

    /** The thread's row (worker index + 1): one thread, one row, no lookup. */
    static final int ROW = 1;
    /** Slot rows: row 0 for the root, row {@link #ROW} for the splits. */
    static final int ROWS = 2;

    /** What both floors share: the quadrature's slots, stack pointers and tolerance, as OursSide has them. */
    abstract static class FloorSide extends RecursiveShapesBench.Side {
        static final int SP_STRIDE = RecursiveShapesBench.OursSide.SP_STRIDE;
        static final int REGION_SLOTS = RecursiveShapesBench.OursSide.REGION_SLOTS;
        static final int SLOT = RecursiveShapesBench.OursSide.SLOT;
        static final int A = RecursiveShapesBench.OursSide.A;
        static final int B = RecursiveShapesBench.OursSide.B;
        static final int FA = RecursiveShapesBench.OursSide.FA;
        static final int FM = RecursiveShapesBench.OursSide.FM;
        static final int FB = RecursiveShapesBench.OursSide.FB;
        static final int WHOLE = RecursiveShapesBench.OursSide.WHOLE;

        final double[] slots = new double[ROWS * REGION_SLOTS * SLOT];
        final int[] sp = new int[(ROWS + 1) * SP_STRIDE];
        double eps;

        /** A quadrature begins: every stack empty, the root's node in slot 0 (row 0's), as OursFork's root. */
        void setRoot(double eps) {
            this.eps = eps;
            java.util.Arrays.fill(sp, 0);
            double fa = Quad.f(Quad.A);
            double fb = Quad.f(Quad.B);
            double fm = Quad.f((Quad.A + Quad.B) * 0.5);
            setSlot(0, Quad.A, Quad.B, fa, fm, fb, Quad.simpson(Quad.A, Quad.B, fa, fm, fb));
        }

        void setSlot(int slot, double a, double b, double fa, double fm, double fb, double whole) {
            int o = slot * SLOT;
            slots[o + A] = a;
            slots[o + B] = b;
            slots[o + FA] = fa;
            slots[o + FM] = fm;
            slots[o + FB] = fb;
            slots[o + WHOLE] = whole;
        }

        @Override
        long queens(int n, int splitRows) {
            throw new UnsupportedOperationException("the floors run fib and quadrature only");
        }

        @Override
        long reduce(long[] values, int leaf) {
            throw new UnsupportedOperationException("the floors run fib and quadrature only");
        }

        @Override
        void stencilStep(Problem p, int parity) {
            throw new UnsupportedOperationException("the floors run fib and quadrature only");
        }

        @Override
        void matmul(Problem p) {
            throw new UnsupportedOperationException("the floors run fib and quadrature only");
        }
    }

    /** {@code RecursiveShapesBench.Ours} (the join form) over a join that only calls its two halves. */
    static final class JoinFloor extends FloorSide {
        static final int ACC_STRIDE = 16;
        static final int RESULT = 6;
        static final ObjLongConsumer<JoinFloor> FIB = JoinFloor::fib;
        static final ObjLongConsumer<JoinFloor> QUAD = JoinFloor::quad;

        private final long[] acc = new long[(ROWS + 1) * ACC_STRIDE];

        /** The stand-in for {@code pool.join(fn, this, left, right)}. */
        private void join(ObjLongConsumer<JoinFloor> fn, long left, long right) {
            fn.accept(this, left);
            fn.accept(this, right);
        }

        @Override
        long fib(int n) {
            if (n < 2) {
                return n;
            }
            acc[(ROW + 1) * ACC_STRIDE] = 0;
            join(FIB, n - 2, n - 1);
            return acc[(ROW + 1) * ACC_STRIDE];
        }

        /** Ours.fib: a leaf adds into its row's accumulator, a node joins n - 2 and n - 1. */
        static void fib(JoinFloor o, long n) {
            if (n < 2) {
                o.acc[(ROW + 1) * ACC_STRIDE] += n;
                return;
            }
            o.join(FIB, n - 2, n - 1);
        }

        @Override
        double quadrature(double eps) {
            setRoot(eps);
            quad(this, 0L); // the root's node in slot 0 (Ours runs the root's own split on the caller: the same work)
            return slots[RESULT];
        }

        /** Ours.quad: the node in slot {@code (int) arg}, its children in the next two slots of the row's stack. */
        static void quad(JoinFloor o, long arg) {
            double[] s = o.slots;
            int at = (int) arg * SLOT;
            int depth = (int) (arg >>> 32);
            double a = s[at + A];
            double b = s[at + B];
            double fa = s[at + FA];
            double fm = s[at + FM];
            double fb = s[at + FB];
            double whole = s[at + WHOLE];
            double m = (a + b) * 0.5;
            double flm = Quad.f((a + m) * 0.5);
            double frm = Quad.f((m + b) * 0.5);
            double left = Quad.simpson(a, m, fa, flm, fm);
            double right = Quad.simpson(m, b, fm, frm, fb);
            if (Quad.leaf(left, right, whole, o.eps, depth)) {
                s[at + RESULT] = Quad.leafValue(left, right, whole);
                return;
            }
            int spAt = (ROW + 1) * SP_STRIDE;
            int top = o.sp[spAt];
            if (top + 2 > REGION_SLOTS) {
                throw new IllegalStateException("quadrature: more than " + REGION_SLOTS + " slots");
            }
            o.sp[spAt] = top + 2;
            int l = ROW * REGION_SLOTS + top;
            o.setSlot(l, a, m, fa, flm, fm, left);
            o.setSlot(l + 1, m, b, fm, frm, fb, right);
            o.join(QUAD, RecursiveShapesBench.Ours.quadArg(l, depth + 1),
                    RecursiveShapesBench.Ours.quadArg(l + 1, depth + 1));
            double sum = s[l * SLOT + RESULT] + s[(l + 1) * SLOT + RESULT];
            o.sp[spAt] = top;
            s[at + RESULT] = sum;
        }
    }

    /** {@code RecursiveShapesBench.OursFork} (fork handles) over a fork that pushes its half and a join that pops it. */
    static final class ForkFloor extends FloorSide {
        static final ObjLongToLongFunction<ForkFloor> FIB = ForkFloor::fib;
        static final ObjLongToDoubleFunction<ForkFloor> QUAD = ForkFloor::quad;

        /** The stand-in's stack of open forks: function, context, argument. */
        private Object[] fns = new Object[64];
        private Object[] ctxs = new Object[64];
        private long[] args = new long[64];
        private int top;

        private int push(Object fn, Object ctx, long arg) {
            int pos = top;
            if (pos == fns.length) {
                fns = java.util.Arrays.copyOf(fns, pos * 2);
                ctxs = java.util.Arrays.copyOf(ctxs, pos * 2);
                args = java.util.Arrays.copyOf(args, pos * 2);
            }
            fns[pos] = fn;
            ctxs[pos] = ctx;
            args[pos] = arg;
            top = pos + 1;
            return pos;
        }

        private int pop(long h) {
            int pos = (int) h;
            if (pos != top - 1) {
                throw new IllegalStateException("joined out of order: " + pos + ", top " + top);
            }
            top = pos;
            return pos;
        }

        @SuppressWarnings("unchecked")
        private long joinLong(long h) {
            int pos = pop(h);
            return ((ObjLongToLongFunction<Object>) fns[pos]).applyAsLong(ctxs[pos], args[pos]);
        }

        @SuppressWarnings("unchecked")
        private double joinDouble(long h) {
            int pos = pop(h);
            return ((ObjLongToDoubleFunction<Object>) fns[pos]).applyAsDouble(ctxs[pos], args[pos]);
        }

        @Override
        long fib(int n) {
            return fib(this, n);
        }

        /** OursFork.fib: fork n - 1, n - 2 in place, join. */
        static long fib(ForkFloor o, long n) {
            if (n < 2) {
                return n;
            }
            long h = o.push(FIB, o, n - 1);
            long left = fib(o, n - 2);
            return left + o.joinLong(h);
        }

        @Override
        double quadrature(double eps) {
            setRoot(eps);
            return quad(this, RecursiveShapesBench.OursFork.quadArg(0, 0));
        }

        static double quad(ForkFloor o, long arg) {
            double[] s = o.slots;
            int at = (int) arg * SLOT;
            return quadNode(o, s[at + A], s[at + B], s[at + FA], s[at + FM], s[at + FB], s[at + WHOLE],
                    (int) (arg >>> 32));
        }

        /** OursFork.quadNode: the right child forked (its node in the row's next slot), the left in place. */
        static double quadNode(ForkFloor o, double a, double b, double fa, double fm, double fb, double whole,
                               int depth) {
            double m = (a + b) * 0.5;
            double flm = Quad.f((a + m) * 0.5);
            double frm = Quad.f((m + b) * 0.5);
            double left = Quad.simpson(a, m, fa, flm, fm);
            double right = Quad.simpson(m, b, fm, frm, fb);
            if (Quad.leaf(left, right, whole, o.eps, depth)) {
                return Quad.leafValue(left, right, whole);
            }
            int spAt = ROW * SP_STRIDE;
            int top = o.sp[spAt];
            if (top >= REGION_SLOTS) {
                throw new IllegalStateException("quadrature: more than " + REGION_SLOTS + " slots");
            }
            o.sp[spAt] = top + 1;
            int slot = ROW * REGION_SLOTS + top;
            o.setSlot(slot, m, b, fm, frm, fb, right);
            long h = o.push(QUAD, o, RecursiveShapesBench.OursFork.quadArg(slot, depth + 1));
            double l = quadNode(o, a, m, fa, flm, fm, left, depth + 1);
            double r = o.joinDouble(h);
            o.sp[spAt] = top;
            return l + r;
        }
    }
}
