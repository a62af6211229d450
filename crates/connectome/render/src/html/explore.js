// The connectome page's explorer (docs/connectome-render.md, "The HTML page").
// Each `.explore` block holds a tool bar, a viewport with one drawing, and the drawing's graph as JSON
// data: nodes as [id, name, kind] and edges as [from, to], in the order of the drawing's `g.nodes` and
// `g.edges` children. The script fetches nothing and writes text from the data only as text.
(() => {
  'use strict';
  const root = document.documentElement;
  const errors = [];
  const note = (message) => {
    errors.push(String(message));
    root.setAttribute('data-errors', errors.join(' | '));
  };
  window.addEventListener('error', (event) => note(event.message || 'script error'));
  window.addEventListener('unhandledrejection', (event) => note('unhandled rejection: ' + event.reason));

  // The fragment's parameters: q (the search), kinds (a comma list), sel (a node id), view (a drawing).
  const fragment = () => new URLSearchParams(location.hash.replace(/^#/, ''));

  const ZOOM_STEP = 1.25;
  const MIN_WIDTH = 60;
  const PAN_STEP = 0.12;
  // The scale a selected node is brought to when the drawing is shown smaller (names readable).
  const READABLE = 0.9;
  // The least height a viewport shrinks to around a wide, flat drawing, as a share of the window.
  const LEAST_HEIGHT = 0.45;

  class Explorer {
    constructor(box) {
      this.box = box;
      const data = JSON.parse(box.querySelector('script.graph-data').textContent);
      this.ids = data.nodes.map((d) => d[0]);
      this.names = data.nodes.map((d) => d[1]);
      this.folded = this.names.map((s) => s.toLowerCase());
      this.kinds = data.nodes.map((d) => d[2]);
      this.edges = data.edges;
      const n = this.ids.length;
      const m = this.edges.length;
      this.svg = box.querySelector('svg.graph');
      this.viewport = box.querySelector('.viewport');
      this.nodeEls = Array.from(this.svg.querySelector('g.nodes').children);
      this.edgeEls = Array.from(this.svg.querySelector('g.edges').children);
      if (this.nodeEls.length !== n || this.edgeEls.length !== m) {
        throw new Error('the drawing of ' + box.dataset.view + ' does not match its data');
      }
      this.index = new Map(this.nodeEls.map((el, i) => [el, i]));
      this.out = Array.from({ length: n }, () => []);
      this.in = Array.from({ length: n }, () => []);
      this.edges.forEach(([a, b], j) => {
        this.out[a].push(j);
        this.in[b].push(j);
      });
      this.shown = new Uint8Array(n);
      this.edgeShown = new Uint8Array(m);
      this.nodeClass = new Array(n).fill('n');
      this.edgeClass = new Array(m).fill('e');
      this.counts = { nodes: n, edges: m };
      this.selected = -1;
      this.full = { w: Number(this.svg.getAttribute('width')) || 1, h: Number(this.svg.getAttribute('height')) || 1 };
      this.view = { x: 0, y: 0, w: this.full.w, h: this.full.h };
      this.frame = 0;
      this.drag = null;
      this.search = box.querySelector('input.q');
      this.boxes = Array.from(box.querySelectorAll('input[data-kind]'));
      this.status = box.querySelector('.status');
      this.wire();
      box.querySelector('.tools').hidden = false;
      this.settle();
      this.fit();
    }

    // A drawing much wider than high leaves its viewport mostly empty once fitted: shrink the
    // viewport to the fitted drawing, keeping room to zoom.
    settle() {
      const c = this.size();
      const fitted = (this.full.h * c.w) / this.full.w;
      const least = Math.min(c.h, window.innerHeight * LEAST_HEIGHT);
      if (fitted < c.h) this.viewport.style.height = Math.ceil(Math.max(fitted, least)) + 'px';
    }

    wire() {
      this.search.addEventListener('input', () => this.apply());
      this.search.addEventListener('keydown', (e) => {
        if (e.key === 'Enter') this.fit();
      });
      this.boxes.forEach((b) => b.addEventListener('change', () => this.apply()));
      this.box.querySelectorAll('button[data-act]').forEach((b) => {
        b.addEventListener('click', () => this.act(b.dataset.act));
      });
      const svg = this.svg;
      svg.addEventListener('wheel', (e) => {
        e.preventDefault();
        const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1;
        this.zoomAt(Math.exp(e.deltaY * unit * 0.0015), e.clientX, e.clientY);
      }, { passive: false });
      svg.addEventListener('pointerdown', (e) => {
        if (e.button !== 0) return;
        this.drag = { x: e.clientX, y: e.clientY, vx: this.view.x, vy: this.view.y, moved: false, target: e.target };
        svg.setPointerCapture(e.pointerId);
      });
      svg.addEventListener('pointermove', (e) => {
        const d = this.drag;
        if (!d) return;
        const dx = e.clientX - d.x;
        const dy = e.clientY - d.y;
        if (!d.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
        d.moved = true;
        svg.classList.add('dragging');
        const scale = this.view.w / Math.max(1, svg.clientWidth);
        this.view.x = d.vx - dx * scale;
        this.view.y = d.vy - dy * scale;
        this.show(false);
      });
      const end = (e) => {
        const d = this.drag;
        this.drag = null;
        svg.classList.remove('dragging');
        if (!d || d.moved || e.type === 'pointercancel') return;
        const g = d.target && d.target.closest ? d.target.closest('g.n') : null;
        this.select(g && this.index.has(g) ? this.index.get(g) : -1);
      };
      svg.addEventListener('pointerup', end);
      svg.addEventListener('pointercancel', end);
      this.viewport.addEventListener('keydown', (e) => this.key(e));
      if (typeof ResizeObserver === 'function') {
        new ResizeObserver(() => this.resize()).observe(this.viewport);
      }
    }

    act(name) {
      if (name === 'in') this.zoomCentre(1 / ZOOM_STEP);
      else if (name === 'out') this.zoomCentre(ZOOM_STEP);
      else if (name === 'fit') this.fit();
      else if (name === 'clear') this.select(-1);
    }

    key(e) {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      const v = this.view;
      const pan = (dx, dy) => {
        v.x += dx * v.w * PAN_STEP;
        v.y += dy * v.h * PAN_STEP;
        this.show(false);
      };
      const keys = {
        '+': () => this.zoomCentre(1 / ZOOM_STEP),
        '=': () => this.zoomCentre(1 / ZOOM_STEP),
        '-': () => this.zoomCentre(ZOOM_STEP),
        '0': () => this.fit(),
        ArrowLeft: () => pan(-1, 0),
        ArrowRight: () => pan(1, 0),
        ArrowUp: () => pan(0, -1),
        ArrowDown: () => pan(0, 1),
        Escape: () => this.select(-1),
      };
      const f = keys[e.key];
      if (!f) return;
      e.preventDefault();
      f();
    }

    size() {
      return { w: Math.max(1, this.svg.clientWidth || this.full.w), h: Math.max(1, this.svg.clientHeight || this.full.h) };
    }

    zoomAt(factor, cx, cy) {
      const r = this.svg.getBoundingClientRect();
      if (!(r.width > 0 && r.height > 0)) return;
      const px = (cx - r.left) / r.width;
      const py = (cy - r.top) / r.height;
      const v = this.view;
      const gx = v.x + px * v.w;
      const gy = v.y + py * v.h;
      const limit = Math.max(this.full.w, (this.full.h * r.width) / r.height) * 4;
      const w = Math.min(limit, Math.max(MIN_WIDTH, v.w * factor));
      const h = (w * r.height) / r.width;
      this.view = { x: gx - px * w, y: gy - py * h, w, h };
      this.show(false);
    }

    zoomCentre(factor) {
      const r = this.svg.getBoundingClientRect();
      this.zoomAt(factor, r.left + r.width / 2, r.top + r.height / 2);
    }

    // The shown nodes' box (the whole drawing when all are shown), in drawing units.
    extent() {
      if (this.counts.nodes === this.ids.length || this.counts.nodes === 0) {
        return { x: 0, y: 0, w: this.full.w, h: this.full.h };
      }
      let x0 = Infinity;
      let y0 = Infinity;
      let x1 = -Infinity;
      let y1 = -Infinity;
      for (let i = 0; i < this.ids.length; i++) {
        if (!this.shown[i]) continue;
        const b = this.nodeEls[i].getBBox();
        x0 = Math.min(x0, b.x);
        y0 = Math.min(y0, b.y);
        x1 = Math.max(x1, b.x + b.width);
        y1 = Math.max(y1, b.y + b.height);
      }
      const pad = 24;
      return { x: x0 - pad, y: y0 - pad, w: x1 - x0 + 2 * pad, h: y1 - y0 + 2 * pad };
    }

    // What is shown, all in view, never enlarged beyond its natural size.
    fit() {
      const c = this.size();
      const e = this.extent();
      const s = Math.min(c.w / e.w, c.h / e.h, 1);
      const w = c.w / s;
      const h = c.h / s;
      const whole = e.w === this.full.w && e.h === this.full.h && s === 1;
      this.view = whole ? { x: 0, y: 0, w, h } : { x: e.x + (e.w - w) / 2, y: e.y + (e.h - h) / 2, w, h };
      this.show(true);
    }

    resize() {
      const c = this.size();
      this.view.h = (this.view.w * c.h) / c.w;
      this.show(false);
    }

    show(now) {
      const write = () => {
        this.frame = 0;
        const v = this.view;
        this.svg.setAttribute('viewBox', [v.x, v.y, v.w, v.h].map((x) => x.toFixed(1)).join(' '));
      };
      if (now) {
        write();
      } else if (!this.frame) {
        this.frame = requestAnimationFrame(write);
      }
    }

    // Brings node `i` to the middle of the viewport, at a readable scale if it is shown smaller.
    centreOn(i) {
      const b = this.nodeEls[i].getBBox();
      const c = this.size();
      const v = this.view;
      const x = b.x + b.width / 2;
      const y = b.y + b.height / 2;
      const small = c.w / v.w < READABLE;
      if (small || x < v.x || x > v.x + v.w || y < v.y || y > v.y + v.h) {
        if (small) {
          v.w = c.w / READABLE;
          v.h = c.h / READABLE;
        }
        v.x = x - v.w / 2;
        v.y = y - v.h / 2;
        this.show(true);
      }
    }

    apply() {
      const q = this.search.value.trim().toLowerCase();
      const allowed = new Set(this.boxes.filter((b) => b.checked).map((b) => b.dataset.kind));
      let nodes = 0;
      let edges = 0;
      for (let i = 0; i < this.ids.length; i++) {
        const s = allowed.has(this.kinds[i]) && (q === '' || this.folded[i].includes(q)) ? 1 : 0;
        this.shown[i] = s;
        nodes += s;
      }
      this.edges.forEach(([a, b], j) => {
        const s = this.shown[a] & this.shown[b];
        this.edgeShown[j] = s;
        edges += s;
      });
      this.counts = { nodes, edges };
      if (this.selected >= 0 && !this.shown[this.selected]) this.selected = -1;
      this.paint();
    }

    select(i) {
      this.selected = i >= 0 && this.shown[i] ? i : -1;
      this.paint();
    }

    // What `start` reaches along the shown edges of `lists` (out or in), `end` naming the far endpoint.
    closure(start, lists, end) {
      const nodes = new Uint8Array(this.ids.length);
      const edges = new Uint8Array(this.edges.length);
      const stack = [start];
      while (stack.length) {
        const u = stack.pop();
        for (const j of lists[u]) {
          if (!this.edgeShown[j]) continue;
          edges[j] = 1;
          const v = this.edges[j][end];
          if (!nodes[v]) {
            nodes[v] = 1;
            stack.push(v);
          }
        }
      }
      return { nodes, edges };
    }

    paint() {
      const s = this.selected;
      const fwd = s >= 0 ? this.closure(s, this.out, 1) : null;
      const bwd = s >= 0 ? this.closure(s, this.in, 0) : null;
      let reaches = 0;
      let reachedBy = 0;
      for (let i = 0; i < this.ids.length; i++) {
        let c = this.shown[i] ? 'n' : 'n h';
        if (i === s) {
          c += ' sel';
        } else if (fwd) {
          if (fwd.nodes[i]) {
            c += ' fwd';
            reaches++;
          }
          if (bwd.nodes[i]) {
            c += ' bwd';
            reachedBy++;
          }
        }
        if (c !== this.nodeClass[i]) {
          this.nodeClass[i] = c;
          this.nodeEls[i].setAttribute('class', c);
        }
      }
      for (let j = 0; j < this.edges.length; j++) {
        let c = this.edgeShown[j] ? 'e' : 'e h';
        if (fwd && fwd.edges[j]) c += ' fwd';
        if (bwd && bwd.edges[j]) c += ' bwd';
        if (c !== this.edgeClass[j]) {
          this.edgeClass[j] = c;
          this.edgeEls[j].setAttribute('class', c);
        }
      }
      this.svg.classList.toggle('focus', s >= 0);
      const d = this.box.dataset;
      d.shown = String(this.counts.nodes);
      d.edgesShown = String(this.counts.edges);
      let text = this.counts.nodes + ' of ' + this.ids.length + ' nodes, ' + this.counts.edges + ' of ' +
        this.edges.length + ' edges shown';
      if (s >= 0) {
        d.selected = this.ids[s];
        d.reaches = String(reaches);
        d.reachedBy = String(reachedBy);
        text += ' · ' + this.names[s] + ' reaches ' + reaches + ', is reached by ' + reachedBy;
      } else {
        delete d.selected;
        delete d.reaches;
        delete d.reachedBy;
      }
      this.status.textContent = text;
    }

    fromFragment(p) {
      this.search.value = p.get('q') || '';
      const kinds = p.get('kinds');
      const wanted = kinds === null ? null : new Set(kinds.split(',').map((k) => k.trim()));
      this.boxes.forEach((b) => {
        b.checked = wanted === null || wanted.has(b.dataset.kind);
      });
      this.apply();
      if (this.counts.nodes < this.ids.length) this.fit();
      const sel = p.get('sel');
      const i = sel === null ? -1 : this.ids.indexOf(sel);
      this.select(i);
      if (this.selected >= 0) this.centreOn(this.selected);
    }
  }

  const start = () => {
    const explorers = [];
    for (const box of document.querySelectorAll('.explore')) {
      try {
        explorers.push(new Explorer(box));
      } catch (err) {
        note(err && err.message ? err.message : err);
      }
    }
    const follow = () => {
      const p = fragment();
      explorers.forEach((x) => x.fromFragment(p));
      const target = explorers.find((x) => x.box.dataset.view === p.get('view'));
      if (target) target.box.scrollIntoView();
    };
    follow();
    window.addEventListener('hashchange', follow);
    root.setAttribute('data-ready', String(explorers.length));
  };
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
})();
