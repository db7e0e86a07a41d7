// The benchmark suite in jax-js (npm @jax-js/jax): the twin of bench/suite_webjax.py, doing
// the same work with jax-js's documented API (jit, numpy, lax.convGeneralDilated, grad, nn,
// `.ref`/`.dispose()` ownership, `await x.blockUntilReady()`). Each case returns raw timings
// (seconds); bench/run.py turns them into metrics.

const now = () => performance.now() / 1000;
let TARGET_S = 1.0; // seconds of timed calls that are enough (set per case by runCase)

async function measure(runOnce, budgetS, maxReps) {
  const targetS = TARGET_S;
  const start = now();
  await runOnce();
  const warmup = now() - start;
  if (warmup > budgetS) return { status: "timeout", warmup_s: warmup };
  if (warmup < 0.1 * budgetS) await runOnce(); // a second warm-up where it is cheap
  const times = [];
  while (times.length < maxReps) {
    const t = now();
    await runOnce();
    const dt = now() - t;
    times.push(dt);
    const total = times.reduce((a, b) => a + b, 0);
    if (now() - start + dt > budgetS || (times.length >= 3 && total >= targetS)) break;
  }
  return { status: "ok", warmup_s: warmup, times };
}

function makeCases(jax) {
  const { numpy: np, lax, nn, random, tree, jit, grad, blockUntilReady } = jax;

  // U[0, 1) samples; with `scale`, centred: U[-scale, scale).
  function uniform(seed, shape, scale = 0) {
    const x = random.uniform(random.key(seed), shape);
    return scale ? x.sub(0.5).mul(2 * scale) : x;
  }

  // Run `call()` (which returns a fresh array) under measure, keeping the last output.
  async function timed(call, budget, reps) {
    let last = null;
    const res = await measure(
      async () => {
        if (last !== null) last.dispose();
        last = call();
        await last.blockUntilReady();
      },
      budget,
      reps,
    );
    return [res, last];
  }

  return {
    async matmul(p, budget, reps) {
      const a = uniform(0, [p.n, p.n]);
      const b = uniform(1, [p.n, p.n]);
      await blockUntilReady([a, b]);
      const f = jit((a, b) => np.matmul(a, b));
      const [res, last] = await timed(() => f(a.ref, b.ref), budget, reps);
      last.dispose(), a.dispose(), b.dispose(), f.dispose();
      return res;
    },

    async chain(p, budget, reps) {
      const x = uniform(2, [p.n]);
      const y = uniform(3, [p.n]);
      await blockUntilReady([x, y]);
      const f = jit((x, y) => np.sqrt(x.ref.mul(x).add(y.ref.mul(y))).mul(0.5).add(1));
      const [res, last] = await timed(() => f(x.ref, y.ref), budget, reps);
      last.dispose(), x.dispose(), y.dispose(), f.dispose();
      return res;
    },

    async sum(p, budget, reps) {
      const x = uniform(10, [p.n]);
      await x.blockUntilReady();
      const f = jit((x) => np.sum(x));
      const [res, last] = await timed(() => f(x.ref), budget, reps);
      if (res.status === "ok") {
        // U[0, 1) has mean 1/2: a loose check that the sum is of the right size.
        const got = (await last.ref.data())[0];
        res.check_rel_err = Math.abs(got - 0.5 * p.n) / (0.5 * p.n);
      }
      last.dispose(), x.dispose(), f.dispose();
      return res;
    },

    async eager_add(p, budget, reps) {
      const x = uniform(11, [p.size]); // a computed buffer, not a lazy constant
      await x.blockUntilReady();
      const x0 = (await x.ref.data())[0];
      const [res, last] = await timed(
        () => {
          let y = x.ref;
          for (let i = 0; i < p.count; i++) y = y.add(x.ref);
          return y;
        },
        budget,
        reps,
      );
      if (res.status === "ok") {
        const got = (await last.ref.data())[0];
        const want = (p.count + 1) * x0;
        res.check_rel_err = Math.abs(got - want) / want;
      }
      last.dispose(), x.dispose();
      return res;
    },

    async mlp(p, budget, reps) {
      let params = {
        w1: uniform(4, [p.d_in, p.hidden], 0.05),
        b1: np.zeros([p.hidden]),
        w2: uniform(5, [p.hidden, p.d_out], 0.05),
        b2: np.zeros([p.d_out]),
      };
      const x = uniform(6, [p.batch, p.d_in]);
      const y = uniform(7, [p.batch, p.d_out]).mul(0.2);
      const loss = (q, x, y) => {
        const h = nn.relu(np.matmul(x, q.w1).add(q.b1));
        const logits = np.matmul(h, q.w2).add(q.b2);
        return nn.logSoftmax(logits).mul(y).sum().mul(-1 / p.batch);
      };
      const step = jit((q, x, y) => {
        const g = grad(loss)(tree.ref(q), x, y);
        return {
          w1: q.w1.sub(g.w1.mul(p.lr)),
          b1: q.b1.sub(g.b1.mul(p.lr)),
          w2: q.w2.sub(g.w2.mul(p.lr)),
          b2: q.b2.sub(g.b2.mul(p.lr)),
        };
      });
      const res = await measure(
        async () => {
          params = step(params, x.ref, y.ref);
          await blockUntilReady(params);
        },
        budget,
        reps,
      );
      if (res.status === "ok") {
        const l = loss(tree.ref(params), x.ref, y.ref);
        res.loss_after = (await l.data())[0];
      }
      tree.dispose(params), x.dispose(), y.dispose(), step.dispose();
      return res;
    },

    async conv2d(p, budget, reps) {
      const lhs = uniform(8, [p.n, p.c, p.h, p.w]);
      const rhs = uniform(9, [p.o, p.c, p.k, p.k], 0.1);
      await blockUntilReady([lhs, rhs]);
      const conv = (l, r) => lax.convGeneralDilated(l, r, [1, 1], "SAME");
      const f = p.jit === false ? conv : jit(conv);
      const [res, last] = await timed(() => f(lhs.ref, rhs.ref), budget, reps);
      last.dispose(), lhs.dispose(), rhs.dispose();
      if (f !== conv) f.dispose();
      return res;
    },
  };
}

let cases = null;

/** Run one benchmark case on jax-js's current default device. */
export async function runCase(jax, kind, params, budgetS, maxReps, targetS = 1.0) {
  cases ??= makeCases(jax);
  TARGET_S = targetS;
  const start = now();
  let res;
  try {
    if (!(kind in cases)) throw new Error(`no such case: ${kind}`);
    res = await cases[kind](params, budgetS, maxReps);
  } catch (error) {
    res = { status: "error", error: String(error?.stack ?? error).slice(0, 2000) };
  }
  res.case_s = now() - start;
  return res;
}

/** The page's first computed value (time to first result ends when this resolves). */
export async function firstResult(jax) {
  const x = jax.numpy.ones([4]).add(1);
  return (await x.data())[0];
}
