// Sweeper's board: the cells on a <canvas>, its view (fit, zoom, pan) and
// the marks over it (cursors, moves, points). Its input (mouse, touch,
// wheel) is board-input.js, which adds its methods to this class. The page
// (app.js) says what a press means.

const CHARS = "#F?.12345678*X", CODE = new Uint8Array(128), CC = new Uint16Array(14);
for (let i = 0; i < 14; i++) { CODE[CHARS.charCodeAt(i)] = i; CC[i] = CHARS.charCodeAt(i); }
const COVERED = 0, FLAG = 1, QUESTION = 2, EMPTY = 3, MINE = 12, BOOM = 13;
// Sprites beyond the looks: a wrong flag, a pressed cell, mines a peek shows.
const WRONG = 14, PRESSED = 15, PEEK = 16, PEEK_Q = 17, SPRITES = 18;
const MAX_CELL = 52, MAX_ZOOM_CELL = 72; // CSS px: a board that fits; zoomed
export const covered = (k) => k === COVERED || k === QUESTION;
export const number = (k) => k >= 4 && k <= 11;
const grow = (d, x, y) => d ? (x < d.x0 && (d.x0 = x), x > d.x1 && (d.x1 = x), y < d.y0 && (d.y0 = y), y > d.y1 && (d.y1 = y), d) : { x0: x, y0: y, x1: x, y1: y };

export class Board {
  constructor(els, handlers) {
    Object.assign(this, els);
    this.h = handlers;
    this.ctx = this.canvas.getContext("2d", { alpha: false });
    this.octx = this.overlay.getContext("2d");
    this.W = this.H = 0; this.cells = new Uint8Array(0);
    this.wrong = this.peek = this.mark = null; this.pressed = [];
    this.zoom = 1; this.offX = this.offY = 0; this.s = this.c = 0; this.dpr = 1;
    this.cursor = { x: 0, y: 0 }; this.showCursor = false; this.interactive = true;
    this.others = []; this.fades = []; this.points = []; this.hints = [];
    this.atlas = document.createElement("canvas");
    this.actx = this.atlas.getContext("2d", { willReadFrequently: true });
    this.map = document.createElement("canvas");
    this.mctx = this.map.getContext("2d");
    this.readTheme();
    this.bindInput(); // board-input.js
    const dark = matchMedia("(prefers-color-scheme: dark)");
    if (dark.addEventListener) dark.addEventListener("change", () => { this.readTheme(); this.atlasKey = ""; this.rebuildMap(); this.layout(); });
    if (window.ResizeObserver) new ResizeObserver(() => this.layout()).observe(this.stage);
    addEventListener("resize", () => this.layout());
  }

  // ----- data -----

  /// Shows a W×H board from its rows; `keep` keeps zoom and pan (the same game again).
  load(W, H, rows, keep) {
    W = Math.max(1, W | 0); H = Math.max(1, H | 0);
    keep = keep && W === this.W && H === this.H;
    this.W = W; this.H = H;
    if (this.cells.length !== W * H) this.cells = new Uint8Array(W * H);
    for (let y = 0; y < H; y++) {
      const row = rows && typeof rows[y] === "string" ? rows[y] : "", b = y * W;
      for (let x = 0; x < W; x++) { const ch = x < row.length ? row.charCodeAt(x) : 35; this.cells[b + x] = ch < 128 ? CODE[ch] : 0; }
    }
    this.wrong = this.peek = this.mark = this.rowsCache = null; this.pressed = [];
    if (!keep) { this.zoom = 1; this.offX = this.offY = 0; this.fades = []; this.points = []; this.hints = []; }
    this.cursor = { x: Math.min(this.cursor.x, W - 1), y: Math.min(this.cursor.y, H - 1) };
    this.rebuildMap();
    this.layout(null, true);
  }

  code(x, y) { return x >= 0 && y >= 0 && x < this.W && y < this.H ? this.cells[y * this.W + x] : -1; }
  char(x, y) { const k = this.code(x, y); return k < 0 ? "" : CHARS[k]; }

  /// The rows as the protocol writes them.
  rows() {
    if (this.rowsCache) return this.rowsCache;
    const out = [], buf = new Uint16Array(this.W);
    for (let y = 0; y < this.H; y++) {
      for (let x = 0; x < this.W; x++) buf[x] = CC[this.cells[y * this.W + x]];
      out.push(String.fromCharCode.apply(null, buf));
    }
    return (this.rowsCache = out);
  }

  count(ch) { const k = CODE[ch.charCodeAt(0)]; let n = 0; for (const v of this.cells) if (v === k) n++; return n; }

  /// Applies changed cells ({x, y, value}), drawing those alone; returns the change in flags.
  apply(list) {
    if (!Array.isArray(list)) return 0;
    let flags = 0, any = false;
    for (const c of list) {
      if (!c || typeof c.value !== "string") continue;
      const x = c.x | 0, y = c.y | 0;
      if (x < 0 || y < 0 || x >= this.W || y >= this.H) continue;
      const ch = c.value.charCodeAt(0), k = ch < 128 ? CODE[ch] : 0, i = y * this.W + x, was = this.cells[i];
      if (was === k) continue;
      flags += (k === FLAG) - (was === FLAG);
      this.cells[i] = k; any = true;
      this.drawCell(x, y);
    }
    if (any) { this.rowsCache = null; this.flush(); }
    return flags;
  }

  mask(list, get) {
    if (!list) return null;
    const m = new Uint8Array(this.W * this.H);
    list.forEach((p, i) => get(m, p, i));
    return m;
  }
  setWrongFlags(list) {
    this.wrong = Array.isArray(list) && list.length ? this.mask(list, (m, p) => { if (p && p.x >= 0 && p.y >= 0 && p.x < this.W && p.y < this.H) m[p.y * this.W + p.x] = 1; }) : null;
    this.rebuildMap(); this.requestFull();
  }
  /// Mines a peek shows (rows of `.` and `*`), or null.
  setPeek(rows) {
    this.peek = Array.isArray(rows) ? this.mask(rows.slice(0, this.H), (m, r, y) => { r = String(r); for (let x = 0; x < this.W && x < r.length; x++) if (r[x] === "*") m[y * this.W + x] = 1; }) : null;
    this.rebuildMap(); this.requestFull();
  }
  spriteOf(i) {
    const k = this.cells[i];
    if (this.wrong && this.wrong[i] && k === FLAG) return WRONG;
    if (this.pressed.length && covered(k)) { const x = i % this.W, y = (i - x) / this.W; if (this.pressed.some((p) => p[0] === x && p[1] === y)) return PRESSED; }
    if (this.peek && this.peek[i]) { if (k === COVERED) return PEEK; if (k === QUESTION) return PEEK_Q; }
    return k;
  }

  // ----- theme and sprites -----

  readTheme() {
    const cs = getComputedStyle(document.documentElement), v = (n) => cs.getPropertyValue("--" + n).trim() || "#888";
    this.theme = { font: v("board-font"), n: [1, 2, 3, 4, 5, 6, 7, 8].map((k) => v("n" + k)) };
    for (const n of ["covered", "hi", "lo", "open", "grid", "pressed", "mark", "flag", "pole", "mine", "boom", "wrong", "cursor", "cursor-in", "hint"]) this.theme[n] = v("cell-" + n);
  }

  buildAtlas(c) {
    const key = c + JSON.stringify(this.theme);
    if (this.atlasKey === key) return;
    this.atlasKey = key;
    this.atlas.width = c * SPRITES; this.atlas.height = c;
    const g = this.actx;
    this.spr = [];
    for (let k = 0; k < SPRITES; k++) {
      g.save(); g.translate(k * c, 0); g.beginPath(); g.rect(0, 0, c, c); g.clip();
      this.paint(g, k, c, this.theme);
      g.restore();
      this.spr.push(new Uint32Array(g.getImageData(k * c, 0, c, c).data.buffer));
    }
  }

  paint(g, k, c, t) {
    const poly = (col, pts) => { g.fillStyle = col; g.beginPath(); pts.forEach((p, i) => g[i ? "lineTo" : "moveTo"](p[0], p[1])); g.fill(); };
    const raised = () => {
      const b = Math.max(1, Math.round(c / 11));
      g.fillStyle = t.covered; g.fillRect(0, 0, c, c);
      poly(t.hi, [[0, 0], [c, 0], [c - b, b], [b, b], [b, c - b], [0, c]]);
      poly(t.lo, [[c, c], [0, c], [b, c - b], [c - b, c - b], [c - b, b], [c, 0]]);
    };
    const flat = (bg) => {
      const w = Math.max(1, Math.round(c / 28));
      g.fillStyle = bg; g.fillRect(0, 0, c, c);
      g.fillStyle = t.grid; g.fillRect(0, 0, c, w); g.fillRect(0, 0, w, c);
    };
    const text = (s, col) => {
      const size = Math.max(6, Math.round(c * 0.64));
      g.font = "800 " + size + "px " + t.font; g.textAlign = "center"; g.fillStyle = col;
      const m = g.measureText(s), a = m.actualBoundingBoxAscent || size * 0.72, d = m.actualBoundingBoxDescent || 0;
      g.fillText(s, c / 2 + 0.5, Math.round(c / 2 + (a - d) / 2) + 0.5);
    };
    const mine = (alpha) => {
      const r = c * 0.25, m = c / 2;
      g.globalAlpha = alpha; g.strokeStyle = g.fillStyle = t.mine; g.lineWidth = Math.max(1, c * 0.075); g.lineCap = "round";
      g.beginPath();
      for (let a = 0; a < 4; a++) { const dx = Math.cos(a * Math.PI / 4) * r * 1.45, dy = Math.sin(a * Math.PI / 4) * r * 1.45; g.moveTo(m - dx, m - dy); g.lineTo(m + dx, m + dy); }
      g.stroke();
      g.beginPath(); g.arc(m, m, r, 0, 7); g.fill();
      g.fillStyle = "#fff"; g.beginPath(); g.arc(m - r * 0.35, m - r * 0.35, r * 0.28, 0, 7); g.fill();
      g.globalAlpha = 1;
    };
    const flag = () => {
      const x = Math.round(c * 0.56), w = Math.max(1, Math.round(c * 0.08));
      g.fillStyle = t.pole; g.fillRect(x - w / 2, c * 0.2, w, c * 0.56); g.fillRect(c * 0.3, c * 0.74, c * 0.44, Math.max(1, c * 0.08));
      poly(t.flag, [[x + w / 2, c * 0.18], [x + w / 2, c * 0.5], [c * 0.22, c * 0.34]]);
    };
    if (k === COVERED || k === FLAG || k === QUESTION || k === PEEK || k === PEEK_Q) raised();
    else if (k === BOOM) { g.fillStyle = t.boom; g.fillRect(0, 0, c, c); }
    else flat(k === PRESSED ? t.pressed : t.open);
    if (k === FLAG || k === WRONG) flag();
    if (k === MINE || k === BOOM) mine(1);
    if (k === PEEK || k === PEEK_Q) mine(k === PEEK ? 0.5 : 0.35);
    if (k === QUESTION || k === PEEK_Q) text("?", t.mark);
    if (number(k)) text(String(k - 3), t.n[k - 4]);
    if (k === BOOM) { const w = Math.max(1, c / 14); g.strokeStyle = t.mine; g.lineWidth = w; g.strokeRect(w / 2, w / 2, c - w, c - w); }
    if (k === WRONG) {
      g.lineCap = "round"; g.beginPath(); g.moveTo(c * 0.2, c * 0.2); g.lineTo(c * 0.8, c * 0.8); g.moveTo(c * 0.8, c * 0.2); g.lineTo(c * 0.2, c * 0.8);
      g.strokeStyle = t.open; g.lineWidth = Math.max(2, c * 0.2); g.stroke();
      g.strokeStyle = t.wrong; g.lineWidth = Math.max(1.5, c * 0.11); g.stroke();
    }
  }

  /// One pixel a sprite, for the map (cells too small to draw).
  mapColours() {
    const p = document.createElement("canvas").getContext("2d", { willReadFrequently: true });
    const rgb = (col) => { p.fillStyle = "#000"; p.fillStyle = col; p.fillRect(0, 0, 1, 1); return p.getImageData(0, 0, 1, 1).data; };
    const mix = (a, b, f) => [0, 1, 2].map((i) => Math.round(a[i] * (1 - f) + b[i] * f));
    const t = this.theme, open = rgb(t.open), cov = rgb(t.covered), mine = rgb(t.mine);
    const list = [cov, rgb(t.flag), mix(cov, rgb(t.mark), 0.3), open];
    for (let k = 0; k < 8; k++) list.push(mix(open, rgb(t.n[k]), 0.55));
    list.push(mine, rgb(t.boom), mix(open, rgb(t.wrong), 0.6), rgb(t.pressed), mix(cov, mine, 0.45), mix(cov, mine, 0.45));
    const le = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
    return Uint32Array.from(list, (c) => le ? (255 << 24 | c[2] << 16 | c[1] << 8 | c[0]) >>> 0 : (c[0] << 24 | c[1] << 16 | c[2] << 8 | 255) >>> 0);
  }

  rebuildMap() {
    if (!this.W) return;
    this.mapRGBA = this.mapColours();
    if (this.map.width !== this.W || this.map.height !== this.H || !this.mapData) {
      this.map.width = this.W; this.map.height = this.H;
      this.mapData = this.mctx.createImageData(this.W, this.H);
      this.map32 = new Uint32Array(this.mapData.data.buffer);
    }
    for (let i = 0; i < this.cells.length; i++) this.map32[i] = this.mapRGBA[this.spriteOf(i)];
    this.mctx.putImageData(this.mapData, 0, 0);
    this.mapDirty = null;
  }

  // ----- view -----

  /// Sizes the canvas: the whole board when it fits (the canvas is then
  /// exactly the cells), else a window on it that zooms and pans.
  layout(focus, force) {
    if (!this.W) return;
    const dpr = devicePixelRatio || 1, st = this.stage, px = (e, p) => parseFloat(getComputedStyle(e)[p]) || 0;
    const border = px(this.frame, "borderLeftWidth"), padX = px(st, "paddingLeft"), padY = px(st, "paddingTop");
    const availW = Math.floor(Math.max(20, st.clientWidth - 2 * padX - 2 * border) * dpr) / dpr;
    const availH = Math.floor(Math.max(20, st.clientHeight - 2 * padY - 2 * border) * dpr) / dpr;
    const base = Math.min(availW / this.W, availH / this.H, MAX_CELL);
    this.maxZoom = Math.max(1, MAX_ZOOM_CELL / base);
    this.zoom = Math.min(Math.max(1, this.zoom), this.maxZoom);
    let s = base * this.zoom;
    if (s * dpr >= 4) s = Math.floor(s * dpr + 1e-6) / dpr;
    const changed = s !== this.s;
    this.s = s; this.dpr = dpr; this.base = base;
    const sr = st.getBoundingClientRect();
    const axis = (grid, avail, off, f) => {
      if (grid <= avail + 1e-6) return [grid, Math.round((avail - grid) / 2 * dpr) / dpr, 0, 0];
      if (f) off = f[0] - f[1] * s;
      return [avail, 0, Math.round(Math.min(0, Math.max(avail - grid, off)) * dpr) / dpr, avail - grid];
    };
    const ax = axis(this.W * s, availW, this.offX, focus && [focus.cx - sr.left - st.clientLeft - padX - border, focus.wx]);
    const ay = axis(this.H * s, availH, this.offY, focus && [focus.cy - sr.top - st.clientTop - padY - border, focus.wy]);
    [this.offX, this.limX, this.offY, this.limY] = [ax[2], ax[3], ay[2], ay[3]];
    this.scroll = ax[3] < 0 || ay[3] < 0;
    const bw = this.bw = Math.round(ax[0] * dpr), bh = this.bh = Math.round(ay[0] * dpr);
    Object.assign(this.frame.style, { left: padX + ax[1] + "px", top: padY + ay[1] + "px", width: ax[0] + 2 * border + "px", height: ay[0] + 2 * border + "px" });
    for (const cv of [this.canvas, this.overlay]) {
      cv.style.width = ax[0] + "px"; cv.style.height = ay[0] + "px";
      if (cv.width !== bw) cv.width = bw;
      if (cv.height !== bh) cv.height = bh;
    }
    this.c = s * dpr;
    const ci = Math.round(this.c);
    this.mode = Math.abs(this.c - ci) < 1e-6 && ci >= 6 ? "sprite" : "map";
    if (this.mode === "sprite") { this.c = ci; this.buildAtlas(ci); }
    this.ox = Math.round(this.offX * dpr); this.oy = Math.round(this.offY * dpr);
    this.drawAll();
    if (force || changed || focus) this.h.viewChanged();
  }

  /// Zooms by `factor` around the client point (cx, cy).
  zoomAt(factor, cx, cy) {
    if (!this.W) return;
    const r = this.canvas.getBoundingClientRect();
    const wx = (cx - r.left - this.offX) / this.s, wy = (cy - r.top - this.offY) / this.s;
    this.zoom = Math.min(Math.max(1, this.zoom * factor), this.maxZoom || 1);
    this.layout({ cx, cy, wx, wy });
  }
  zoomBy(f) { const r = this.stage.getBoundingClientRect(); this.zoomAt(f, r.left + r.width / 2, r.top + r.height / 2); }
  fit() { this.zoom = 1; this.layout(null, true); }

  /// Moves the view by (dx, dy) CSS px; drawn at the next frame.
  pan(dx, dy) {
    if (!this.scroll) return;
    const d = this.dpr;
    this.offX = Math.round(Math.min(0, Math.max(this.limX, this.offX + dx)) * d) / d;
    this.offY = Math.round(Math.min(0, Math.max(this.limY, this.offY + dy)) * d) / d;
    const ox = Math.round(this.offX * d), oy = Math.round(this.offY * d);
    if (ox === this.ox && oy === this.oy) return;
    this.ox = ox; this.oy = oy;
    this.requestFull();
  }

  /// Pans so that cell (x, y) is in sight, with a margin.
  reveal(x, y) {
    if (!this.scroll) return;
    const r = this.canvas.getBoundingClientRect(), s = this.s;
    const fix = (p, len) => { const m = Math.min(2 * s, len / 4); return p < m ? m - p : p + s > len - m ? len - m - p - s : 0; };
    this.pan(fix(x * s + this.offX, r.width), fix(y * s + this.offY, r.height));
  }

  // ----- drawing -----

  requestFull() {
    if (this.fullPending) return;
    this.fullPending = true;
    requestAnimationFrame(() => { this.fullPending = false; this.drawAll(); });
  }

  /// Draws every cell in sight. Cells of 6 device px or more are copied
  /// from their sprite's pixels into one image (as fast for 10,000 cells
  /// as for 100); smaller ones are the map, one pixel a cell, scaled.
  drawAll() {
    if (!this.W || !this.bw) return;
    const g = this.ctx;
    if (this.mode === "map") {
      this.flushMapNow();
      g.fillStyle = this.theme.covered; g.fillRect(0, 0, this.bw, this.bh);
      g.imageSmoothingEnabled = false;
      g.drawImage(this.map, this.ox, this.oy, this.W * this.c, this.H * this.c);
    } else {
      if (!this.img || this.img.width !== this.bw || this.img.height !== this.bh) {
        this.img = g.createImageData(this.bw, this.bh);
        this.buf = new Uint32Array(this.img.data.buffer);
      }
      const c = this.c, W = this.W, simple = !this.wrong && !this.peek && !this.pressed.length;
      const x0 = Math.max(0, Math.floor(-this.ox / c)), x1 = Math.min(W - 1, Math.floor((this.bw - 1 - this.ox) / c));
      const y0 = Math.max(0, Math.floor(-this.oy / c)), y1 = Math.min(this.H - 1, Math.floor((this.bh - 1 - this.oy) / c));
      for (let y = y0; y <= y1; y++) for (let x = x0; x <= x1; x++) this.blit(simple ? this.cells[y * W + x] : this.spriteOf(y * W + x), x, y);
      this.dirty = null;
      g.putImageData(this.img, 0, 0);
    }
    this.drawOverlay();
  }

  /// Copies sprite `k` into the image at cell (x, y), clipped to the canvas.
  blit(k, x, y) {
    const c = this.c, bw = this.bw, px = this.ox + x * c, py = this.oy + y * c;
    const c0 = Math.max(0, -px), c1 = Math.min(c, bw - px), r0 = Math.max(0, -py), r1 = Math.min(c, this.bh - py);
    if (c1 <= c0 || r1 <= r0) return false;
    const spr = this.spr[k], buf = this.buf;
    for (let r = r0; r < r1; r++) {
      let o = (py + r) * bw + px + c0, i = r * c + c0;
      const end = r * c + c1;
      while (i < end) buf[o++] = spr[i++];
    }
    return true;
  }

  drawCell(x, y) {
    const i = y * this.W + x, k = this.spriteOf(i);
    if (this.map32) { this.map32[i] = this.mapRGBA[k]; this.mapDirty = grow(this.mapDirty, x, y); }
    if (this.mode === "sprite" && !this.fullPending && this.buf && this.blit(k, x, y)) this.dirty = grow(this.dirty, x, y);
  }

  flushMapNow() {
    const d = this.mapDirty;
    if (d) { this.mapDirty = null; this.mctx.putImageData(this.mapData, 0, 0, d.x0, d.y0, d.x1 - d.x0 + 1, d.y1 - d.y0 + 1); }
  }

  /// Shows the cells drawn since the last flush (their rectangle alone).
  flush() {
    if (this.mode === "map") return this.requestFull();
    const d = this.dirty, c = this.c;
    if (!d || this.fullPending) return;
    this.dirty = null;
    this.ctx.putImageData(this.img, 0, 0, this.ox + d.x0 * c, this.oy + d.y0 * c, (d.x1 - d.x0 + 1) * c, (d.y1 - d.y0 + 1) * c);
  }

  // ----- over the cells: cursors, moves, points -----

  requestOverlay() {
    if (this.overlayPending) return;
    this.overlayPending = true;
    requestAnimationFrame(() => { this.overlayPending = false; this.drawOverlay(); });
  }
  setOthers(list) { this.others = list || []; this.requestOverlay(); }
  setCursor(x, y, show) {
    this.cursor = { x: Math.max(0, Math.min(this.W - 1, x)), y: Math.max(0, Math.min(this.H - 1, y)) };
    if (show !== undefined) this.showCursor = show;
    this.requestOverlay();
  }
  /// Glows `cells` in `colour` for a moment (a player's move); a big one as its outline.
  flashMove(cells, colour) {
    if (!cells || !cells.length) return;
    const f = { colour, t0: performance.now(), dur: 1600 };
    if (cells.length > 300) {
      const xs = cells.map((c) => c.x), ys = cells.map((c) => c.y);
      f.box = [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
    } else f.cells = cells.map((c) => [c.x, c.y]);
    this.fades.push(f);
    if (this.fades.length > 40) this.fades.shift();
    this.requestOverlay();
  }
  /// Flashes (x, y) in a player's colour for 4 s ("look here").
  flashPoint(x, y, colour, fg, letter) {
    this.points = this.points.filter((p) => p.x !== x || p.y !== y);
    this.points.push({ x, y, colour, fg, letter, t0: performance.now(), dur: 4000 });
    this.requestOverlay();
  }
  flashHint(x, y) { this.hints = [{ x, y, t0: performance.now(), dur: 3500 }]; this.requestOverlay(); }
  clearFlashes() { this.fades = []; this.points = []; this.hints = []; this.requestOverlay(); }
  /// A replayed move's mark: its author's letter at the cell.
  setMark(m) { this.mark = m; this.requestOverlay(); }

  drawOverlay() {
    const g = this.octx, c = this.c, dpr = this.dpr, now = performance.now(), t = this.theme;
    if (!this.bw) return;
    g.clearRect(0, 0, this.bw, this.bh);
    const at = (x, y) => [this.ox + x * c, this.oy + y * c];
    const live = (list) => list.filter((f) => now - f.t0 < f.dur);
    const lw = Math.max(2 * dpr, c * 0.09);
    const badge = (px, py, colour, fg, letter) => {
      const size = Math.max(11 * dpr, Math.min(c * 0.45, 20 * dpr)), o = Math.min(2 * dpr, c * 0.06);
      g.fillStyle = colour; g.beginPath();
      g.roundRect ? g.roundRect(px + o, py + o, size, size, size / 4) : g.rect(px + o, py + o, size, size);
      g.fill();
      g.fillStyle = fg; g.font = "800 " + Math.round(size * 0.72) + "px " + t.font; g.textAlign = "center"; g.textBaseline = "middle";
      g.fillText(letter, px + o + size / 2, py + o + size * 0.54);
    };
    const outline = (px, py, colour, w) => { g.strokeStyle = colour; g.lineWidth = w; g.strokeRect(px + w / 2, py + w / 2, c - w, c - w); };
    this.fades = live(this.fades); this.points = live(this.points); this.hints = live(this.hints);
    for (const f of this.fades) {
      const a = 1 - (now - f.t0) / f.dur;
      if (f.box) {
        const [px, py] = at(f.box[0], f.box[1]);
        g.globalAlpha = a; g.strokeStyle = f.colour; g.lineWidth = 3 * dpr;
        g.strokeRect(px, py, (f.box[2] - f.box[0] + 1) * c, (f.box[3] - f.box[1] + 1) * c);
      } else { g.globalAlpha = 0.55 * a; g.fillStyle = f.colour; for (const p of f.cells) { const [px, py] = at(p[0], p[1]); g.fillRect(px, py, c, c); } }
    }
    for (const p of this.points.concat(this.hints)) {
      const [px, py] = at(p.x, p.y), pulse = 0.5 + 0.5 * Math.sin((now - p.t0) / 1000 * Math.PI * 3), col = p.colour || t.hint;
      g.globalAlpha = 0.25 + 0.4 * pulse; g.fillStyle = col; g.fillRect(px, py, c, c);
      g.globalAlpha = 1; g.strokeStyle = col; g.lineWidth = lw * 1.4;
      const e = p.colour ? c * 0.35 * pulse : 0;
      g.strokeRect(px - e, py - e, c + 2 * e, c + 2 * e);
      if (p.letter) badge(px, py, p.colour, p.fg, p.letter);
    }
    g.globalAlpha = 1;
    for (const o of this.others.concat(this.mark ? [this.mark] : [])) {
      if (o.x < 0 || o.y < 0 || o.x >= this.W || o.y >= this.H) continue;
      const [px, py] = at(o.x, o.y);
      outline(px, py, o.colour, o === this.mark ? lw * 1.3 : lw);
      badge(px, py, o.colour, o.fg, o.letter);
    }
    if (this.showCursor) {
      const [px, py] = at(this.cursor.x, this.cursor.y), w = Math.max(2 * dpr, c * 0.08);
      g.lineWidth = 2 * w; g.strokeStyle = t["cursor-in"]; g.strokeRect(px + w, py + w, c - 2 * w, c - 2 * w);
      outline(px, py, t.cursor, w);
    }
    if (this.fades.length || this.points.length || this.hints.length) this.requestOverlay();
  }
}
