// The board's input (board.js): mouse buttons, touch (a tap, a hold and
// its ring, two fingers to pinch and pan) and the wheel, added to Board's
// methods. What a press means is the page's (app.js): the board calls the
// handlers it was made with.
import { Board, covered, number } from "./board.js";

const SLOP = 8, HOLD_MS = 400;

Object.assign(Board.prototype, {
  // ----- input -----

  bindInput() {
    const st = this.stage, on = (n, f) => st.addEventListener(n, f, { passive: false });
    this.ptrs = new Map();
    on("pointerdown", (e) => this.onDown(e));
    on("pointermove", (e) => this.onMove(e));
    on("pointerup", (e) => this.onUp(e));
    on("pointercancel", (e) => this.onCancel(e));
    on("wheel", (e) => this.onWheel(e));
    for (const n of ["contextmenu", "dragstart", "gesturestart"]) on(n, (e) => e.preventDefault());
  },

  onDown(e) {
    const t = e.target;
    if (!this.W || !(t === this.canvas || t === this.stage || t === this.frame)) return;
    e.preventDefault();
    try { this.stage.setPointerCapture(e.pointerId); } catch (_) { /* gone */ }
    if (e.pointerType === "mouse") return this.buttons(e);
    this.ptrs.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (this.ptrs.size === 1) {
      const cell = this.cellAt(e.clientX, e.clientY);
      this.touch = { id: e.pointerId, x0: e.clientX, y0: e.clientY, lx: e.clientX, ly: e.clientY, cell };
      if (!cell) return;
      this.h.hover(cell, "touch");
      this.setPressed(this.pressLook(cell.x, cell.y));
      this.h.press(true);
      if (this.h.canHold(cell.x, cell.y)) this.startHold(e.clientX, e.clientY);
    } else {
      // A second finger: a pinch, never a tap.
      this.endPress();
      if (this.touch) this.touch.done = true;
      this.pinch = this.pinchState();
    }
  },

  pinchState() {
    const [a, b] = [...this.ptrs.values()];
    return { d: Math.hypot(a.x - b.x, a.y - b.y) || 1, mx: (a.x + b.x) / 2, my: (a.y + b.y) / 2 };
  },

  onMove(e) {
    if (!this.W) return;
    if (e.pointerType === "mouse") return this.mouse && e.buttons !== this.mouse.buttons ? this.buttons(e) : this.mouseMove(e);
    const p = this.ptrs.get(e.pointerId);
    if (!p) return;
    e.preventDefault();
    p.x = e.clientX; p.y = e.clientY;
    if (this.ptrs.size >= 2 && this.pinch) {
      const now = this.pinchState(), f = now.d / this.pinch.d;
      if (Math.abs(f - 1) > 0.002) { this.offX += now.mx - this.pinch.mx; this.offY += now.my - this.pinch.my; this.zoomAt(f, now.mx, now.my); }
      else this.pan(now.mx - this.pinch.mx, now.my - this.pinch.my);
      this.pinch = now;
      return;
    }
    const t = this.touch;
    if (!t || t.id !== e.pointerId || t.done) return;
    if (!t.moved && Math.hypot(e.clientX - t.x0, e.clientY - t.y0) > SLOP) {
      // Moved: no tap, no hold; a drag pans a board bigger than the screen.
      t.moved = true; t.pan = this.scroll; t.done = !t.pan; t.lx = e.clientX; t.ly = e.clientY;
      this.cancelHold(); this.endPress();
    }
    if (t.pan) { this.pan(e.clientX - t.lx, e.clientY - t.ly); t.lx = e.clientX; t.ly = e.clientY; }
  },

  onUp(e) {
    if (e.pointerType === "mouse") return this.mouse && this.buttons(e);
    if (!this.ptrs.delete(e.pointerId)) return;
    e.preventDefault();
    const t = this.touch;
    if (this.ptrs.size < 2) this.pinch = null;
    if (!this.ptrs.size) this.touch = null;
    if (!t || t.id !== e.pointerId) return;
    this.cancelHold(); this.endPress();
    if (t.done || t.moved || t.held || !t.cell) return;
    const cell = this.cellAt(e.clientX, e.clientY) || t.cell;
    this.h.primary(cell.x, cell.y, "touch");
  },

  onCancel(e) {
    if (e.pointerType === "mouse") this.mouse = null;
    else { this.ptrs.delete(e.pointerId); if (this.ptrs.size < 2) this.pinch = null; this.touch = null; this.cancelHold(); }
    this.endPress();
  },

  /// Press and hold: a ring fills around the finger; at 400 ms the hold acts (a flag drops).
  startHold(x, y) {
    this.cancelHold();
    const ring = this.ring;
    this.ringTimer = setTimeout(() => {
      Object.assign(ring.style, { left: x + "px", top: y + "px" });
      ring.classList.remove("done", "fill"); ring.classList.add("show");
      void ring.getBoundingClientRect();
      ring.classList.add("fill");
    }, 70);
    this.holdTimer = setTimeout(() => {
      const t = this.touch;
      if (!t || t.done || t.moved || this.ptrs.size !== 1) return;
      t.held = true;
      this.endPress();
      const ua = navigator.userActivation;
      if (this.h.hold(t.cell.x, t.cell.y) && navigator.vibrate && (!ua || ua.hasBeenActive)) try { navigator.vibrate(30); } catch (_) { /* refused */ }
      ring.classList.add("done");
      this.ringOff = setTimeout(() => ring.classList.remove("show", "fill", "done"), 260);
    }, HOLD_MS);
  },

  cancelHold() {
    clearTimeout(this.holdTimer); clearTimeout(this.ringTimer); clearTimeout(this.ringOff);
    if (!this.ring.classList.contains("done")) this.ring.classList.remove("show", "fill");
  },

  endPress() { if (this.pressed.length) this.setPressed([]); this.h.press(false); },

  /// Mouse buttons: left reveals on release, right flags on press, middle
  /// or left+right chord on release, a left drag pans a zoomed board.
  buttons(e) {
    const now = e.buttons | 0, cell = this.cellAt(e.clientX, e.clientY);
    const m = this.mouse || (this.mouse = { buttons: 0 });
    const down = now & ~m.buttons, up = m.buttons & ~now;
    m.buttons = now;
    if (down) {
      if (now === down) Object.assign(m, { x0: e.clientX, y0: e.clientY, lx: e.clientX, ly: e.clientY, pan: false, done: false, chord: false, left: false });
      if (down & 1 && !(now & 6)) m.left = true;
      if (down & 4 || (now & 3) === 3) { m.chord = true; m.done = false; }
      else if (down & 2 && !(now & 5)) { if (cell) this.h.secondary(cell.x, cell.y, "mouse"); m.done = true; }
      if (m.left || m.chord) this.h.press(true);
      this.mouseLook(cell);
    }
    if (up) {
      if (m.chord && !m.done) { m.done = true; if (cell) this.h.chord(cell.x, cell.y); }
      else if (up & 1 && m.left && !m.done && !m.pan) { m.done = true; if (cell) this.h.primary(cell.x, cell.y, "mouse"); }
      if (!now) { this.mouse = null; this.endPress(); this.stage.classList.remove("grabbing"); } else this.mouseLook(cell);
    }
  },

  mouseLook(cell) {
    const m = this.mouse;
    this.setPressed(m && !m.done && !m.pan && cell && (m.left || m.chord) ? this.pressLook(cell.x, cell.y, m.chord) : []);
  },

  mouseMove(e) {
    const cell = this.cellAt(e.clientX, e.clientY), m = this.mouse;
    if (m && m.buttons) {
      if (m.buttons & 1 && !m.chord && this.scroll && !m.pan && Math.hypot(e.clientX - m.x0, e.clientY - m.y0) > SLOP) {
        m.pan = true; m.lx = e.clientX; m.ly = e.clientY;
        this.endPress(); this.stage.classList.add("grabbing");
      }
      if (m.pan) { this.pan(e.clientX - m.lx, e.clientY - m.ly); m.lx = e.clientX; m.ly = e.clientY; return; }
      const l = this.lastLook;
      if (!l !== !cell || (cell && (l.x !== cell.x || l.y !== cell.y))) this.mouseLook(cell);
      this.lastLook = cell;
    }
    const h = this.lastHover;
    if (cell && (!h || h.x !== cell.x || h.y !== cell.y)) { this.lastHover = cell; this.h.hover(cell, "mouse"); }
  },

  onWheel(e) {
    if (!this.W) return;
    e.preventDefault();
    const u = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1;
    if (e.ctrlKey || e.metaKey) this.zoomAt(Math.exp(-e.deltaY * u * 0.0025), e.clientX, e.clientY);
    else if (e.shiftKey && !e.deltaX) this.pan(-e.deltaY * u, 0);
    else this.pan(-e.deltaX * u, -e.deltaY * u);
  },

  // ----- where a press is, and what it pushes down -----

  /// The cell under a client point, or null.
  cellAt(cx, cy) {
    if (!this.W) return null;
    const r = this.canvas.getBoundingClientRect();
    if (cx < r.left || cy < r.top || cx >= r.right || cy >= r.bottom) return null;
    const x = Math.floor((cx - r.left - this.offX) / this.s), y = Math.floor((cy - r.top - this.offY) / this.s);
    return x < 0 || y < 0 || x >= this.W || y >= this.H ? null : { x, y };
  },
  /// Cells drawn pushed down (a button or finger held on them).
  setPressed(list) {
    const old = this.pressed;
    this.pressed = list || [];
    for (const p of old.concat(this.pressed)) this.drawCell(p[0], p[1]);
    this.flush();
  },
  /// What a press at (x, y) pushes down: the cell, or for a chord (or a number) its covered neighbours.
  pressLook(x, y, chord) {
    const k = this.code(x, y), out = [];
    if (k < 0 || !this.interactive) return out;
    if (chord || number(k)) { for (let dy = -1; dy <= 1; dy++) for (let dx = -1; dx <= 1; dx++) if (covered(this.code(x + dx, y + dy))) out.push([x + dx, y + dy]); }
    else if (covered(k)) out.push([x, y]);
    return out;
  }
});

export { Board };
