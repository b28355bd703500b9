// clsplat view: draws the run's model with WebGL2 as clsplat's rasterizer does (the same
// projection, clamped Jacobian, 2D filter, 3-sigma extent, alpha in [1/255, 0.99], SH colour),
// blending sorted Gaussians back to front into a half-float target; draws the training cameras
// as frusta; shows a camera's photo on a click; refreshes the model (model.json, model.bin: the
// layout is src/serve/view_model.h's) and the dashboard while the run trains.
// window.clsplatView is the page's handle for tests: state, viewFromCamera(i), pixels().
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const canvas = $("gl"), status = $("status");
  const view = (window.clsplatView = { state: { iteration: -1, count: 0, frames: 0, loads: 0, error: "" } });
  const fail = (msg) => { view.state.error = msg; status.textContent = msg; };
  const gl = canvas.getContext("webgl2", { antialias: false, alpha: false, preserveDrawingBuffer: true });
  if (!gl) return fail("this browser has no WebGL2: the 3D view is off (the dashboard below still works)");
  const floatTarget = !!gl.getExtension("EXT_color_buffer_float");

  // ---- shaders ---------------------------------------------------------------------------
  const SPLAT_VS = `#version 300 es
precision highp float; precision highp int; precision highp sampler2D;
uniform sampler2D u_geo, u_sh;
uniform int u_texw, u_shtexels, u_degree, u_mip;
uniform mat3 u_R; uniform vec3 u_t, u_campos;
uniform vec4 u_intr; uniform vec2 u_size; uniform float u_kernel;
layout(location = 0) in vec2 a_corner;
layout(location = 1) in uint a_index;
out vec3 v_rgb; out float v_op; out vec3 v_conic; flat out vec2 v_mean;
vec4 fetch(sampler2D s, int l) { return texelFetch(s, ivec2(l % u_texw, l / u_texw), 0); }
float shc(int k, int c) { vec4 t = fetch(u_sh, int(a_index) * u_shtexels + (3 * k + c) / 4); int j = (3 * k + c) % 4;
  return j == 0 ? t.x : j == 1 ? t.y : j == 2 ? t.z : t.w; }
vec3 sh3(int k) { return vec3(shc(k, 0), shc(k, 1), shc(k, 2)); }
vec3 colour(vec3 p) {
  vec3 d = normalize(p - u_campos); float x = d.x, y = d.y, z = d.z;
  vec3 c = 0.28209479177387814 * sh3(0);
  if (u_degree > 0) c += 0.4886025119029199 * (-y * sh3(1) + z * sh3(2) - x * sh3(3));
  if (u_degree > 1) { float xx = x * x, yy = y * y, zz = z * z;
    c += 1.0925484305920792 * x * y * sh3(4) - 1.0925484305920792 * y * z * sh3(5)
       + 0.31539156525252005 * (2.0 * zz - xx - yy) * sh3(6) - 1.0925484305920792 * x * z * sh3(7)
       + 0.5462742152960396 * (xx - yy) * sh3(8);
    if (u_degree > 2)
      c += -0.5900435899266435 * y * (3.0 * xx - yy) * sh3(9) + 2.890611442640554 * x * y * z * sh3(10)
         - 0.4570457994644658 * y * (4.0 * zz - xx - yy) * sh3(11)
         + 0.3731763325901154 * z * (2.0 * zz - 3.0 * xx - 3.0 * yy) * sh3(12)
         - 0.4570457994644658 * x * (4.0 * zz - xx - yy) * sh3(13) + 1.445305721320277 * z * (xx - yy) * sh3(14)
         - 0.5900435899266435 * x * (xx - 3.0 * yy) * sh3(15); }
  return max(c + 0.5, 0.0);
}
void cull() { gl_Position = vec4(0.0, 0.0, 2.0, 1.0); }
void main() {
  int i = int(a_index);
  vec4 g0 = fetch(u_geo, 3 * i), g1 = fetch(u_geo, 3 * i + 1), g2 = fetch(u_geo, 3 * i + 2);
  vec3 p = g0.xyz, t = u_R * p + u_t;
  if (t.z <= 0.2) { cull(); return; }
  mat3 S = mat3(g1.x, g1.y, g1.z, g1.y, g1.w, g2.x, g1.z, g2.x, g2.y);
  float fx = u_intr.x, fy = u_intr.y, cx = u_intr.z, cy = u_intr.w, W = u_size.x, H = u_size.y;
  float ux = clamp(t.x / t.z, -1.3 * cx / fx, 1.3 * (W - cx) / fx), uy = clamp(t.y / t.z, -1.3 * cy / fy, 1.3 * (H - cy) / fy);
  vec3 r0 = vec3(u_R[0][0], u_R[1][0], u_R[2][0]), r1 = vec3(u_R[0][1], u_R[1][1], u_R[2][1]), r2 = vec3(u_R[0][2], u_R[1][2], u_R[2][2]);
  vec3 T0 = fx / t.z * r0 - fx * ux / t.z * r2, T1 = fy / t.z * r1 - fy * uy / t.z * r2;
  float a0 = dot(T0, S * T0), b = dot(T0, S * T1), c0 = dot(T1, S * T1);
  float k = u_mip == 1 ? u_kernel : 0.3, a = a0 + k, c = c0 + k, det = a * c - b * b, op = g0.w;
  if (u_mip == 1) { float det0 = a0 * c0 - b * b; if (det0 <= 1e-6 || det <= 1e-6) { cull(); return; } op *= sqrt(det0 / det); }
  else if (det <= 0.0) { cull(); return; }
  float mid = 0.5 * (a + c), l1 = mid + sqrt(max(0.1, mid * mid - det)), radius = ceil(3.0 * sqrt(l1));
  // the pixels clsplat evaluates: those of the 16-pixel tiles its 3-sigma square touches, where
  // alpha can reach 1/255 (an ellipse: d^T conic d <= tau, half-widths sqrt(tau a), sqrt(tau c))
  float tau = 2.0 * log(255.0 * op);
  if (tau <= 0.0) { cull(); return; }
  vec2 m = vec2(fx * t.x / t.z + cx, fy * t.y / t.z + cy), mi = m - 0.5;
  vec2 lo = floor(max(mi - radius, 0.0) / 16.0) * 16.0, hi = floor((mi + radius + 15.0) / 16.0) * 16.0;
  vec2 e = sqrt(tau * vec2(a, c));
  lo = max(lo, m - e - 1.0), hi = min(hi, m + e + 1.0);
  if (lo.x >= hi.x || lo.y >= hi.y) { cull(); return; }
  vec2 px = mix(lo, hi, 0.5 * a_corner + 0.5);
  gl_Position = vec4(2.0 * px.x / W - 1.0, 1.0 - 2.0 * px.y / H, 0.0, 1.0);
  v_mean = m; v_conic = vec3(c, -b, a) / det; v_op = op; v_rgb = colour(p);
}`;
  const SPLAT_FS = `#version 300 es
precision highp float;
uniform vec2 u_size;
in vec3 v_rgb; in float v_op; in vec3 v_conic; flat in vec2 v_mean;
out vec4 o;
void main() {
  vec2 d = v_mean - vec2(gl_FragCoord.x, u_size.y - gl_FragCoord.y);
  float power = -0.5 * (v_conic.x * d.x * d.x + v_conic.z * d.y * d.y) - v_conic.y * d.x * d.y;
  if (power > 0.0) discard;
  float alpha = min(0.99, v_op * exp(power));
  if (alpha < 1.0 / 255.0) discard;
  o = vec4(v_rgb * alpha, alpha);
}`;
  const LINE_VS = `#version 300 es
uniform mat4 u_vp; layout(location = 0) in vec3 a_p; layout(location = 1) in vec3 a_c; out vec3 v_c;
void main() { gl_Position = u_vp * vec4(a_p, 1.0); v_c = a_c; }`;
  const LINE_FS = `#version 300 es
precision mediump float; in vec3 v_c; out vec4 o; void main() { o = vec4(v_c, 1.0); }`;
  const COPY_VS = `#version 300 es
out vec2 v_uv; void main() { vec2 p = vec2((gl_VertexID << 1) & 2, gl_VertexID & 2); v_uv = p; gl_Position = vec4(2.0 * p - 1.0, 0.0, 1.0); }`;
  const COPY_FS = `#version 300 es
precision highp float; uniform sampler2D u_img; in vec2 v_uv; out vec4 o;
void main() { o = vec4(clamp(texture(u_img, v_uv).rgb, 0.0, 1.0), 1.0); }`;

  function program(vs, fs) {
    const p = gl.createProgram();
    for (const [type, src] of [[gl.VERTEX_SHADER, vs], [gl.FRAGMENT_SHADER, fs]]) {
      const s = gl.createShader(type);
      gl.shaderSource(s, src);
      gl.compileShader(s);
      if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error("shader: " + gl.getShaderInfoLog(s));
      gl.attachShader(p, s);
    }
    gl.linkProgram(p);
    if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error("program: " + gl.getProgramInfoLog(p));
    const u = {};
    for (let i = 0, n = gl.getProgramParameter(p, gl.ACTIVE_UNIFORMS); i < n; i++) {
      const name = gl.getActiveUniform(p, i).name;
      u[name] = gl.getUniformLocation(p, name);
    }
    return { p, u };
  }
  let splat, line, copy;
  try {
    splat = program(SPLAT_VS, SPLAT_FS), line = program(LINE_VS, LINE_FS), copy = program(COPY_VS, COPY_FS);
  } catch (e) {
    return fail("WebGL2: " + e.message);
  }

  // ---- small vector helpers (arrays of 3) ----------------------------------------------------
  const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
  const add = (a, b) => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
  const mul = (a, s) => [a[0] * s, a[1] * s, a[2] * s];
  const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const norm = (a) => mul(a, 1 / (Math.hypot(a[0], a[1], a[2]) || 1));

  // ---- the model -------------------------------------------------------------------------------
  const model = { n: 0, pos: null, geo: gl.createTexture(), sh: gl.createTexture(), texw: 1, shtexels: 1, degree: 0,
                  mip: 0, kernel: 0.1, bg: [0, 0, 0], order: null, index: gl.createBuffer() };
  function texture(tex, internal, type, data, texels, perTexel) {
    const w = Math.min(gl.getParameter(gl.MAX_TEXTURE_SIZE), 4096), h = Math.max(1, Math.ceil(texels / w));
    const padded = new data.constructor(w * h * perTexel);
    padded.set(data.subarray(0, Math.min(data.length, padded.length)));
    gl.bindTexture(gl.TEXTURE_2D, tex);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
    gl.texImage2D(gl.TEXTURE_2D, 0, internal, w, h, 0, gl.RGBA, type, padded);
    return w;
  }
  function parse(buf, info) {
    const u = new Uint32Array(buf, 0, 8);
    if (String.fromCharCode(...new Uint8Array(buf, 0, 4)) !== "CSVM" || u[1] !== 1) throw new Error("model.bin: not a clsplat view model");
    const n = u[2], degree = u[3], shtexels = u[5];
    const geo = new Float32Array(buf, 32, n * 12), sh = new Uint16Array(buf, 32 + n * 48, n * shtexels * 4);
    model.texw = texture(model.geo, gl.RGBA32F, gl.FLOAT, geo, n * 3, 4);
    texture(model.sh, gl.RGBA16F, gl.HALF_FLOAT, sh, n * shtexels, 4);
    model.pos = new Float32Array(n * 3);
    for (let i = 0; i < n; i++) model.pos.set(geo.subarray(12 * i, 12 * i + 3), 3 * i);
    Object.assign(model, { n, degree, shtexels, mip: info.mip ? 1 : 0, kernel: info.kernel_size, bg: info.background,
                           order: new Uint32Array(n), keys: new Uint32Array(n), tmp: new Uint32Array(n), sortedFor: "" });
  }

  // back to front by camera depth: an LSD radix sort of 24-bit depth keys, 3 passes of 8 bits
  function sortFor(cam) {
    const key = cam.R.join() + cam.t.join();
    if (model.sortedFor === key || !model.n) return;
    const { n, pos, keys } = model, R = cam.R;
    let zmin = Infinity, zmax = -Infinity;
    const z = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      const d = R[6] * pos[3 * i] + R[7] * pos[3 * i + 1] + R[8] * pos[3 * i + 2] + cam.t[2];
      z[i] = d;
      if (d < zmin) zmin = d;
      if (d > zmax) zmax = d;
    }
    const scale = 16777215 / (zmax - zmin || 1);
    for (let i = 0; i < n; i++) keys[i] = Math.min(16777215, Math.floor((zmax - z[i]) * scale)); // far first
    let src = model.tmp, dst = model.order;
    for (let i = 0; i < n; i++) src[i] = i;
    const count = new Uint32Array(256);
    for (let shift = 0; shift < 24; shift += 8) {
      count.fill(0);
      for (let i = 0; i < n; i++) count[(keys[src[i]] >>> shift) & 255]++;
      for (let b = 0, s = 0; b < 256; b++) { const c = count[b]; count[b] = s; s += c; }
      for (let i = 0; i < n; i++) dst[count[(keys[src[i]] >>> shift) & 255]++] = src[i];
      [src, dst] = [dst, src];
    }
    model.order = src, model.tmp = dst;
    gl.bindBuffer(gl.ARRAY_BUFFER, model.index);
    gl.bufferData(gl.ARRAY_BUFFER, model.order, gl.DYNAMIC_DRAW);
    model.sortedFor = key;
  }

  // ---- cameras: the training views and the viewer's own ------------------------------------
  let cams = [], selected = -1, showCams = true;
  const scene = { target: [0, 0, 0], up: [0, -1, 0], a: [1, 0, 0], b: [0, 0, 1], radius: 1 };
  // cameras.json: position, rotation (camera to world, rows), fx, fy, cx, cy
  function w2c(c) {
    const r = c.rotation, R = [r[0][0], r[1][0], r[2][0], r[0][1], r[1][1], r[2][1], r[0][2], r[1][2], r[2][2]];
    const t = [0, 1, 2].map((k) => -dot(R.slice(3 * k, 3 * k + 3), c.position));
    return { R, t, pos: c.position, fx: c.fx, fy: c.fy, cx: c.cx ?? c.width / 2, cy: c.cy ?? c.height / 2, w: c.width, h: c.height };
  }
  // the scene's centre: the point nearest every training camera's optical axis (least squares);
  // up: against the cameras' mean image-down direction
  function frameScene() {
    if (!cams.length) return;
    const A = [0, 0, 0, 0, 0, 0, 0, 0, 0], rhs = [0, 0, 0];
    let down = [0, 0, 0], mean = [0, 0, 0];
    for (const c of cams) {
      const d = c.R.slice(6, 9), o = c.pos;
      down = add(down, c.R.slice(3, 6)), mean = add(mean, mul(o, 1 / cams.length));
      for (let r = 0; r < 3; r++) for (let k = 0; k < 3; k++) A[3 * r + k] += (r === k ? 1 : 0) - d[r] * d[k];
      for (let r = 0; r < 3; r++) rhs[r] += o[r] - d[r] * dot(d, o);
    }
    const det3 = (m) => m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6]);
    const D = det3(A), solve = (k) => det3(A.map((v, i) => (i % 3 === k ? rhs[(i / 3) | 0] : v))) / D;
    const dists = cams.map((c) => Math.hypot(...sub(c.pos, mean))).sort((x, y) => x - y);
    let target = Math.abs(D) > 1e-6 * cams.length ** 3 ? [solve(0), solve(1), solve(2)] : mean;
    if (!target.every(Number.isFinite) || Math.hypot(...sub(target, mean)) > 10 * (dists[dists.length - 1] || 1))
      target = add(cams[0].pos, mul(cams[0].R.slice(6, 9), dists[dists.length >> 1] || 1));
    const up = norm(mul(down, -1)), f0 = cams[0].R.slice(6, 9);
    const a = norm(sub(f0, mul(up, dot(f0, up))));
    Object.assign(scene, { target, up, a, b: cross(up, a), radius: Math.max(1e-3, Math.hypot(...sub(cams[0].pos, target))) });
    const d0 = norm(sub(target, cams[0].pos));
    Object.assign(orbit, { target, dist: 1.6 * scene.radius, yaw: Math.atan2(dot(d0, scene.b), dot(d0, scene.a)),
                           pitch: Math.asin(Math.max(-1, Math.min(1, dot(d0, up)))) });
  }
  const orbit = { target: [0, 0, 0], dist: 3, yaw: 0, pitch: 0 }, fly = { pos: [0, 0, 0] };
  let mode = "orbit", trainingCam = -1;
  const dirOf = (yaw, pitch) => add(add(mul(scene.a, Math.cos(pitch) * Math.cos(yaw)), mul(scene.b, Math.cos(pitch) * Math.sin(yaw))), mul(scene.up, Math.sin(pitch)));
  function currentCamera(W, H) {
    if (trainingCam >= 0) {
      const c = cams[trainingCam], sx = W / c.w, sy = H / c.h;
      return { R: c.R, t: c.t, pos: c.pos, fx: c.fx * sx, fy: c.fy * sy, cx: c.cx * sx, cy: c.cy * sy };
    }
    const d = dirOf(orbit.yaw, orbit.pitch), pos = mode === "fly" ? fly.pos : sub(orbit.target, mul(d, orbit.dist));
    const x = norm(cross(d, scene.up)), y = cross(d, x), R = [...x, ...y, ...d];
    const f = H / 2 / Math.tan((25 * Math.PI) / 180);
    return { R, t: [-dot(x, pos), -dot(y, pos), -dot(d, pos)], pos, fx: f, fy: f, cx: W / 2, cy: H / 2 };
  }
  // clip coordinates of the OpenCV-style camera (x right, y down, z forward), for lines
  function viewProj(cam, W, H) {
    const n = 0.01 * scene.radius, f = 1000 * scene.radius, R = cam.R, t = cam.t;
    const P = [[(2 * cam.fx) / W, 0, (2 * cam.cx) / W - 1, 0], [0, (-2 * cam.fy) / H, 1 - (2 * cam.cy) / H, 0],
               [0, 0, (f + n) / (f - n), (-2 * f * n) / (f - n)], [0, 0, 1, 0]];
    const V = [[R[0], R[1], R[2], t[0]], [R[3], R[4], R[5], t[1]], [R[6], R[7], R[8], t[2]], [0, 0, 0, 1]];
    const m = new Float32Array(16);
    for (let r = 0; r < 4; r++) for (let c = 0; c < 4; c++) m[c * 4 + r] = [0, 1, 2, 3].reduce((s, k) => s + P[r][k] * V[k][c], 0);
    return m;
  }

  // ---- drawing ---------------------------------------------------------------------------------
  const quad = gl.createBuffer(), lines = gl.createBuffer(), vao = gl.createVertexArray(), lineVao = gl.createVertexArray();
  gl.bindVertexArray(vao);
  gl.bindBuffer(gl.ARRAY_BUFFER, quad);
  gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([-1, -1, 1, -1, -1, 1, 1, 1]), gl.STATIC_DRAW);
  gl.enableVertexAttribArray(0);
  gl.vertexAttribPointer(0, 2, gl.FLOAT, false, 0, 0);
  gl.bindBuffer(gl.ARRAY_BUFFER, model.index);
  gl.enableVertexAttribArray(1);
  gl.vertexAttribIPointer(1, 1, gl.UNSIGNED_INT, 0, 0);
  gl.vertexAttribDivisor(1, 1);
  gl.bindVertexArray(lineVao);
  gl.bindBuffer(gl.ARRAY_BUFFER, lines);
  gl.enableVertexAttribArray(0);
  gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 24, 0);
  gl.enableVertexAttribArray(1);
  gl.vertexAttribPointer(1, 3, gl.FLOAT, false, 24, 12);
  gl.bindVertexArray(null);
  const target = { fb: gl.createFramebuffer(), tex: gl.createTexture(), w: 0, h: 0 };
  function resizeTarget(W, H) {
    if (!floatTarget || (target.w === W && target.h === H)) return;
    gl.bindTexture(gl.TEXTURE_2D, target.tex);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA16F, W, H, 0, gl.RGBA, gl.HALF_FLOAT, null);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
    gl.bindFramebuffer(gl.FRAMEBUFFER, target.fb);
    gl.framebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_2D, target.tex, 0);
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    target.w = W, target.h = H;
  }
  function frustumLines() {
    const v = [], depth = 0.08 * scene.radius;
    cams.forEach((c, i) => {
      const col = i === selected ? [1, 0.2, 0.2] : [1, 0.8, 0.1];
      const corner = (u, w) => {
        const l = [((u - c.cx) / c.fx) * depth, ((w - c.cy) / c.fy) * depth, depth], R = c.R; // camera to world: R^T
        return add(c.pos, [R[0] * l[0] + R[3] * l[1] + R[6] * l[2], R[1] * l[0] + R[4] * l[1] + R[7] * l[2], R[2] * l[0] + R[5] * l[1] + R[8] * l[2]]);
      };
      const k = [corner(0, 0), corner(c.w, 0), corner(c.w, c.h), corner(0, c.h)];
      for (let j = 0; j < 4; j++) v.push(...c.pos, ...col, ...k[j], ...col, ...k[j], ...col, ...k[(j + 1) % 4], ...col);
    });
    return new Float32Array(v);
  }
  function draw() {
    const W = canvas.width, H = canvas.height, cam = currentCamera(W, H);
    resizeTarget(W, H);
    gl.bindFramebuffer(gl.FRAMEBUFFER, floatTarget ? target.fb : null);
    gl.viewport(0, 0, W, H);
    gl.clearColor(model.bg[0], model.bg[1], model.bg[2], 1);
    gl.clear(gl.COLOR_BUFFER_BIT);
    if (model.n) {
      sortFor(cam);
      gl.useProgram(splat.p);
      const u = splat.u;
      gl.activeTexture(gl.TEXTURE0), gl.bindTexture(gl.TEXTURE_2D, model.geo), gl.uniform1i(u.u_geo, 0);
      gl.activeTexture(gl.TEXTURE1), gl.bindTexture(gl.TEXTURE_2D, model.sh), gl.uniform1i(u.u_sh, 1);
      gl.uniform1i(u.u_texw, model.texw), gl.uniform1i(u.u_shtexels, model.shtexels);
      gl.uniform1i(u.u_degree, model.degree), gl.uniform1i(u.u_mip, model.mip), gl.uniform1f(u.u_kernel, model.kernel);
      gl.uniformMatrix3fv(u.u_R, true, cam.R), gl.uniform3fv(u.u_t, cam.t), gl.uniform3fv(u.u_campos, cam.pos);
      gl.uniform4f(u.u_intr, cam.fx, cam.fy, cam.cx, cam.cy), gl.uniform2f(u.u_size, W, H);
      gl.enable(gl.BLEND), gl.blendFunc(gl.ONE, gl.ONE_MINUS_SRC_ALPHA);
      gl.bindVertexArray(vao);
      gl.drawArraysInstanced(gl.TRIANGLE_STRIP, 0, 4, model.n);
      gl.disable(gl.BLEND);
    }
    if (floatTarget) {
      gl.bindFramebuffer(gl.FRAMEBUFFER, null);
      gl.useProgram(copy.p);
      gl.activeTexture(gl.TEXTURE0), gl.bindTexture(gl.TEXTURE_2D, target.tex), gl.uniform1i(copy.u.u_img, 0);
      gl.bindVertexArray(null);
      gl.drawArrays(gl.TRIANGLES, 0, 3);
    }
    if (showCams && cams.length && trainingCam < 0) {
      const v = frustumLines();
      gl.useProgram(line.p);
      gl.uniformMatrix4fv(line.u.u_vp, false, viewProj(cam, W, H));
      gl.bindVertexArray(lineVao);
      gl.bindBuffer(gl.ARRAY_BUFFER, lines);
      gl.bufferData(gl.ARRAY_BUFFER, v, gl.DYNAMIC_DRAW);
      gl.drawArrays(gl.LINES, 0, v.length / 6);
    }
    gl.bindVertexArray(null);
    view.state.frames++;
  }
  let pending = false;
  const redraw = () => { if (!pending) pending = true, requestAnimationFrame(() => { pending = false; fitCanvas(); draw(); }); };
  function fitCanvas() {
    if (trainingCam >= 0 && view.exact) return; // viewFromCamera(i, true) keeps the camera's resolution
    const dpr = window.devicePixelRatio || 1, w = Math.round(canvas.clientWidth * dpr), h = Math.round(canvas.clientHeight * dpr);
    if (w > 0 && h > 0 && (canvas.width !== w || canvas.height !== h)) canvas.width = w, canvas.height = h;
  }

  // ---- controls --------------------------------------------------------------------------------
  function leaveTrainingCam() {
    if (trainingCam < 0) return;
    const c = cams[trainingCam], d = c.R.slice(6, 9);
    orbit.target = add(c.pos, mul(d, orbit.dist)), orbit.yaw = Math.atan2(dot(d, scene.b), dot(d, scene.a));
    orbit.pitch = Math.asin(Math.max(-1, Math.min(1, dot(d, scene.up)))), fly.pos = c.pos;
    trainingCam = -1, view.exact = false;
    canvas.style.height = "";
  }
  let drag = null;
  canvas.addEventListener("contextmenu", (e) => e.preventDefault());
  canvas.addEventListener("pointerdown", (e) => {
    drag = { x: e.clientX, y: e.clientY, x0: e.clientX, y0: e.clientY, pan: e.button === 2 || e.shiftKey };
    canvas.setPointerCapture(e.pointerId), canvas.focus();
  });
  canvas.addEventListener("pointermove", (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    drag.x = e.clientX, drag.y = e.clientY;
    leaveTrainingCam();
    if (drag.pan && mode === "orbit") {
      const cam = currentCamera(canvas.width, canvas.height), s = orbit.dist / cam.fy;
      orbit.target = add(orbit.target, add(mul(cam.R.slice(0, 3), -dx * s), mul(cam.R.slice(3, 6), -dy * s)));
    } else {
      orbit.yaw -= dx * 0.005 * (mode === "orbit" ? 1 : -1);
      orbit.pitch = Math.max(-1.5, Math.min(1.5, orbit.pitch + dy * 0.005 * (mode === "orbit" ? 1 : -1)));
    }
    redraw();
  });
  canvas.addEventListener("pointerup", (e) => {
    const click = drag && Math.hypot(e.clientX - drag.x0, e.clientY - drag.y0) < 4;
    drag = null;
    if (click) pick(e);
  });
  canvas.addEventListener("wheel", (e) => {
    e.preventDefault();
    leaveTrainingCam();
    if (mode === "orbit") orbit.dist *= Math.exp(e.deltaY * 0.001);
    else fly.pos = add(fly.pos, mul(dirOf(orbit.yaw, orbit.pitch), -e.deltaY * 0.001 * scene.radius));
    redraw();
  }, { passive: false });
  const keys = new Set();
  window.addEventListener("keydown", (e) => {
    if (e.target.tagName === "INPUT") return;
    const k = e.key.toLowerCase();
    if (k === "f" || k === "o") {
      leaveTrainingCam();
      if (k === "f" && mode === "orbit") fly.pos = sub(orbit.target, mul(dirOf(orbit.yaw, orbit.pitch), orbit.dist));
      if (k === "o" && mode === "fly") orbit.target = add(fly.pos, mul(dirOf(orbit.yaw, orbit.pitch), orbit.dist));
      mode = k === "f" ? "fly" : "orbit";
      $("mode").textContent = mode === "fly" ? "fly: W A S D, Q E" : "";
    } else if (k === "c") showCams = !showCams;
    else if ("wasdqe".includes(k) && k.length === 1 && mode === "fly") keys.add(k);
    redraw();
  });
  window.addEventListener("keyup", (e) => keys.delete(e.key.toLowerCase()));
  let lastTick = performance.now();
  (function tick(now) {
    const dt = Math.min(0.1, (now - lastTick) / 1000);
    lastTick = now;
    if (keys.size && mode === "fly") {
      leaveTrainingCam();
      const d = dirOf(orbit.yaw, orbit.pitch), r = norm(cross(d, scene.up)), s = 0.5 * scene.radius * dt;
      const m = { w: d, s: mul(d, -1), d: r, a: mul(r, -1), e: scene.up, q: mul(scene.up, -1) };
      for (const k of keys) fly.pos = add(fly.pos, mul(m[k], s));
      redraw();
    }
    requestAnimationFrame(tick);
  })(lastTick);
  function pick(e) {
    if (!showCams || !cams.length) return;
    const rect = canvas.getBoundingClientRect(), sx = canvas.width / rect.width, sy = canvas.height / rect.height;
    const px = (e.clientX - rect.left) * sx, py = (e.clientY - rect.top) * sy;
    const cam = currentCamera(canvas.width, canvas.height);
    let best = -1, bestD = 15 * sx;
    cams.forEach((c, i) => {
      const t = [0, 1, 2].map((k) => dot(cam.R.slice(3 * k, 3 * k + 3), c.pos) + cam.t[k]);
      if (t[2] <= 0) return;
      const d = Math.hypot((cam.fx * t[0]) / t[2] + cam.cx - px, (cam.fy * t[1]) / t[2] + cam.cy - py);
      if (d < bestD) best = i, bestD = d;
    });
    if (best >= 0) showPhoto(best);
  }
  function showPhoto(i) {
    selected = i;
    $("side").hidden = false;
    $("photo-title").textContent = `view ${i}: ${cams[i].name} (${cams[i].w}x${cams[i].h})`;
    $("photo").src = `photo/${i}`;
    redraw();
  }
  $("close").onclick = () => { $("side").hidden = true, selected = -1; redraw(); };
  $("goto").onclick = () => { if (selected >= 0) view.viewFromCamera(selected, false); };

  // for tests and the buttons: the view from training camera I; EXACT: at its resolution
  view.viewFromCamera = (i, exact) => {
    trainingCam = i, view.exact = !!exact;
    if (exact) canvas.width = cams[i].w, canvas.height = cams[i].h, canvas.style.height = "auto", canvas.style.width = cams[i].w + "px";
    fitCanvas();
    draw();
    return { width: canvas.width, height: canvas.height };
  };
  view.pixels = () => canvas.toDataURL("image/png");
  view.names = () => cams.map((c) => c.name);
  view.showPhoto = showPhoto;

  // ---- data: cameras, the model, the dashboard ---------------------------------------------------
  async function loadCameras() {
    const r = await fetch("cameras.json", { cache: "no-store" });
    if (!r.ok) return;
    cams = (await r.json()).map((c) => Object.assign(w2c(c), { name: c.img_name }));
    frameScene();
    view.state.cameras = cams.length;
  }
  let loading = false;
  async function pollModel() {
    if (loading) return;
    loading = true;
    try {
      const info = await (await fetch("model.json", { cache: "no-store" })).json();
      if (info.count > 0 && (info.iteration !== view.state.iteration || info.count !== view.state.count || !model.n)) {
        const r = await fetch("model.bin", { cache: "no-store" });
        if (r.ok) {
          const buf = await r.arrayBuffer();
          parse(buf, info);
          const it = new Int32Array(buf, 16, 1)[0];
          Object.assign(view.state, { iteration: it, count: model.n, loads: view.state.loads + 1 });
          status.textContent = `${model.n.toLocaleString()} Gaussians, iteration ${it}`;
          draw();
        }
      } else if (!model.n) status.textContent = "no model yet (the run has saved none)";
    } catch (e) {
      fail("model: " + e.message);
    } finally {
      loading = false;
    }
  }
  async function pollDashboard() {
    try {
      const r = await fetch("dashboard", { cache: "no-store" });
      const doc = new DOMParser().parseFromString(await r.text(), "text/html");
      const style = doc.querySelector("style");
      $("dash").innerHTML = (style ? style.outerHTML : "") + doc.body.innerHTML;
      view.state.dashboards = (view.state.dashboards || 0) + 1;
    } catch (e) {
      $("dash").textContent = "dashboard: " + e.message;
    }
  }
  window.addEventListener("resize", redraw);
  loadCameras().then(pollModel).then(() => {
    fitCanvas();
    draw();
    view.state.ready = true;
  });
  pollDashboard();
  setInterval(pollModel, 2000);
  setInterval(pollDashboard, 5000);
})();
