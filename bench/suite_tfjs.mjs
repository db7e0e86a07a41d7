// The benchmark suite in TensorFlow.js (npm @tensorflow/tfjs, its bundled WebGL backend): the
// twin of bench/suite_webjax.py and bench/suite_jaxjs.mjs, doing the same work with TF.js ops
// (tf.matMul, an elementwise chain, tf.sum, tf.add, tf.variableGrads, tf.conv2d in NHWC).
// TF.js has no jit: the chain runs as five kernels, and "conv2d jit" is the same eager op as
// "conv2d eager". Each case returns raw timings (seconds); bench/run.py turns them into metrics.
//
// Timing as in the other suites: a warm-up call (shader compilation; a second one when cheap),
// then timed calls until maxReps, or targetS of timed calls (at least 3), or the budget is
// spent. Each call ends with a sync: by default "fence" (a WebGL fence after the call's draws,
// polled until the GPU has passed it: like webjax's gl.finish() and jax-js's blockUntilReady,
// no read-back), or "data" (`await t.data()`: the whole output read back to the page); the
// page's ?tfsync= picks it. Outputs are disposed call by call; intermediates live in tf.tidy.

const now = () => performance.now() / 1000;
let TARGET_S = 1.0; // seconds of timed calls that are enough (set per case by runCase)
let SYNC = "fence";

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
  return { status: "ok", warmup_s: warmup, times, sync: SYNC };
}

function makeCases(tf) {
  // Wait until the GPU has run everything issued so far (or read `tensors` back).
  async function sync(tensors) {
    if (SYNC === "fence") {
      await tf.backend().getGPGPUContext().createAndWaitForFence();
    } else {
      await Promise.all(tensors.map((t) => t.data()));
    }
  }

  // U[0, 1) samples; with `scale`, centred: U[-scale, scale). Made on the GPU (a kernel
  // after the upload), so that the timed calls read computed textures.
  function uniform(seed, shape, scale = 0) {
    return tf.tidy(() => {
      const x = tf.randomUniform(shape, 0, 1, "float32", seed);
      return scale ? x.sub(0.5).mul(2 * scale) : x.add(0);
    });
  }

  // Run `call()` (which returns a fresh tensor) under measure, keeping the last output.
  async function timed(call, budget, reps) {
    let last = null;
    const res = await measure(
      async () => {
        if (last !== null) last.dispose();
        last = call();
        await sync([last]);
      },
      budget,
      reps,
    );
    return [res, last];
  }

  // Read a temporary tensor (a spot check's slice) and dispose of it.
  async function take(t) {
    const v = await t.data();
    t.dispose();
    return v;
  }

  const relErr = (got, want) => Math.abs(got - want) / Math.max(Math.abs(want), 1e-30);

  return {
    async matmul(p, budget, reps) {
      const a = uniform(0, [p.n, p.n]);
      const b = uniform(1, [p.n, p.n]);
      await sync([a, b]);
      const [res, last] = await timed(() => tf.matMul(a, b), budget, reps);
      if (res.status === "ok") {
        // spot check one element against a dot product on the page
        const row = await take(a.slice([0, 0], [1, p.n]));
        const col = await take(b.slice([0, 0], [p.n, 1]));
        let want = 0;
        for (let i = 0; i < p.n; i++) want += row[i] * col[i];
        res.check_rel_err = relErr((await take(last.slice([0, 0], [1, 1])))[0], want);
      }
      last?.dispose(), a.dispose(), b.dispose();
      return res;
    },

    async chain(p, budget, reps) {
      const x = uniform(2, [p.n]);
      const y = uniform(3, [p.n]);
      await sync([x, y]);
      const f = () => tf.tidy(() => tf.sqrt(x.mul(x).add(y.mul(y))).mul(0.5).add(1));
      const [res, last] = await timed(f, budget, reps);
      if (res.status === "ok") {
        const i = p.n - 1;
        const x0 = (await take(x.slice(i, 1)))[0];
        const y0 = (await take(y.slice(i, 1)))[0];
        const want = Math.sqrt(x0 * x0 + y0 * y0) * 0.5 + 1;
        res.check_rel_err = relErr((await take(last.slice(i, 1)))[0], want);
      }
      last?.dispose(), x.dispose(), y.dispose();
      return res;
    },

    async sum(p, budget, reps) {
      const x = uniform(10, [p.n]);
      await sync([x]);
      const [res, last] = await timed(() => tf.sum(x), budget, reps);
      if (res.status === "ok") {
        // U[0, 1) has mean 1/2: a loose check that the sum is of the right size.
        res.check_rel_err = relErr((await last.data())[0], 0.5 * p.n);
      }
      last?.dispose(), x.dispose();
      return res;
    },

    async eager_add(p, budget, reps) {
      const x = uniform(11, [p.size]); // a computed texture, not an upload
      await sync([x]);
      const x0 = (await x.data())[0];
      const add = () =>
        tf.tidy(() => {
          let y = x;
          for (let i = 0; i < p.count; i++) y = tf.add(y, x);
          return y;
        });
      const [res, last] = await timed(add, budget, reps);
      if (res.status === "ok") {
        res.check_rel_err = relErr((await last.data())[0], (p.count + 1) * x0);
      }
      last?.dispose(), x.dispose();
      return res;
    },

    async mlp(p, budget, reps) {
      // The webjax MLP step: relu(x @ w1 + b1) @ w2 + b2, loss -sum(log_softmax * y) / batch,
      // gradients of the four parameters, plain SGD.
      const variable = (name, init) => {
        const v = tf.variable(init, true, name);
        init.dispose(); // the variable holds its own reference to the texture
        return v;
      };
      const vars = {
        w1: variable("w1", uniform(4, [p.d_in, p.hidden], 0.05)),
        b1: variable("b1", tf.zeros([p.hidden])),
        w2: variable("w2", uniform(5, [p.hidden, p.d_out], 0.05)),
        b2: variable("b2", tf.zeros([p.d_out])),
      };
      const x = uniform(6, [p.batch, p.d_in]);
      const y = tf.tidy(() => uniform(7, [p.batch, p.d_out]).mul(0.2));
      const loss = () => {
        const h = tf.relu(tf.matMul(x, vars.w1).add(vars.b1));
        const logits = tf.matMul(h, vars.w2).add(vars.b2);
        return tf.logSoftmax(logits).mul(y).sum().mul(-1 / p.batch);
      };
      const varList = Object.values(vars);
      const step = () =>
        tf.tidy(() => {
          const { value, grads } = tf.variableGrads(loss, varList);
          value.dispose();
          for (const [name, v] of Object.entries(vars)) v.assign(v.sub(grads[name].mul(p.lr)));
        });
      await sync(varList);
      const res = await measure(
        async () => {
          step();
          await sync(varList);
        },
        budget,
        reps,
      );
      if (res.status === "ok") {
        const l = tf.tidy(loss);
        res.loss_after = (await l.data())[0];
        l.dispose();
      }
      for (const v of varList) v.dispose();
      x.dispose(), y.dispose();
      return res;
    },

    async conv2d(p, budget, reps) {
      // NHWC input and HWIO filter (TF.js's layouts): the shapes of the NCHW/OIHW cases.
      const lhs = uniform(8, [p.n, p.h, p.w, p.c]);
      const rhs = uniform(9, [p.k, p.k, p.c, p.o], 0.1);
      await sync([lhs, rhs]);
      const [res, last] = await timed(() => tf.conv2d(lhs, rhs, 1, "same"), budget, reps);
      if (res.status === "ok") {
        // output (0, 1, 1, 0): an interior point, all taps in range
        const patch = await take(lhs.slice([0, 0, 0, 0], [1, p.k, p.k, p.c]));
        const filt = await take(rhs.slice([0, 0, 0, 0], [p.k, p.k, p.c, 1]));
        let want = 0;
        for (let i = 0; i < patch.length; i++) want += patch[i] * filt[i];
        const got = (await take(last.slice([0, 1, 1, 0], [1, 1, 1, 1])))[0];
        res.check_rel_err = relErr(got, want);
      }
      if (p.jit) res.note = "TF.js has no jit: the same eager op";
      last?.dispose(), lhs.dispose(), rhs.dispose();
      return res;
    },
  };
}

let cases = null;

/** Run one benchmark case on TF.js's current backend. */
export async function runCase(tf, kind, params, budgetS, maxReps, targetS = 1.0) {
  cases ??= makeCases(tf);
  TARGET_S = targetS;
  const start = now();
  const before = tf.memory().numTensors;
  let res;
  try {
    if (!(kind in cases)) throw new Error(`no such case: ${kind}`);
    res = await cases[kind](params, budgetS, maxReps);
  } catch (error) {
    res = { status: "error", error: String(error?.stack ?? error).slice(0, 2000) };
  }
  res.case_s = now() - start;
  res.leaked_tensors = tf.memory().numTensors - before;
  return res;
}

/** Pick the sync after each call: "fence" (default) or "data". */
export function setSync(mode) {
  if (mode !== "fence" && mode !== "data") throw new Error(`tfsync: fence or data, not ${mode}`);
  SYNC = mode;
}

/** The page's first computed value (time to first result ends when this resolves). */
export async function firstResult(tf) {
  const x = tf.ones([4]).add(1);
  const v = (await x.data())[0];
  x.dispose();
  return v;
}
