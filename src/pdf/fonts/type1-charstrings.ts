// Type 1 charstrings to Type 2 (Adobe Technical Notes #5015 and #5177), for the conversion of a
// Type 1 font to CFF: each glyph is run through a Type 1 interpreter (subroutines called, div
// computed, the flex and hint-replacement OtherSubrs taken as they are defined in the Type 1
// spec, section 8, and as FreeType runs them) into an outline in absolute coordinates, then
// written out as Type 2 with the same points: rmoveto, rlineto, rrcurveto and flex (a flex stays
// a flex, so hinting renderers keep flattening it). Stems keep their place (Type 1 gives vstems
// relative to the side bearing, Type 2 to the origin); hint replacement becomes hintmask. A seac
// accent is drawn into the glyph (the base glyph, then the accent moved by the composite's side
// bearing + adx - asb, as the spec and FreeType place it), so the glyph needs no component.

/** One glyph's outline and hints, in absolute character-space units. */
export interface Outline {
  width: number;
  /** Path operations: a move, a line, a curve (three points) or a flex (six points and a depth). */
  ops: PathOp[];
  /** Stems (horizontal: y and height; vertical: x and width), each hint set a list of indices. */
  hstems: [number, number][];
  vstems: [number, number][];
  /** The hint sets: the first before any path, then one per replacement, with the op index it starts at. */
  hintSets: { at: number; h: Set<number>; v: Set<number> }[];
}

export type PathOp =
  | { kind: "move" | "line" | "curve"; points: [number, number][] }
  | { kind: "flex"; points: [number, number][]; depth: number };

/** The glyph names StandardEncoding gives codes (seac names its components by these codes). */
export type StandardNames = ReadonlyMap<number, string>;

class Failure extends Error {}

/** Steps one glyph may take: real glyphs take hundreds; a charstring looping through its subroutines is cut off. */
const MAX_STEPS = 100_000;

/** Where an interpreter draws: a seac accent is moved, and a component may not be a seac. */
interface Placement {
  dx: number;
  dy: number;
  component: boolean;
}

const fail = (why: string): never => {
  throw new Failure(why);
};

interface Glyphs {
  charStrings: ReadonlyMap<string, Uint8Array>;
  subrs: readonly Uint8Array[];
  standard: StandardNames;
}

/** The interpreter's state for one glyph (a seac component runs in one of its own). */
class Interpreter {
  stack: number[] = [];
  /** Results the OtherSubrs leave for `pop`, last first. */
  results: number[] = [];
  x = 0;
  y = 0;
  sbx = 0;
  sby = 0;
  width = 0;
  flexPoints: [number, number][] | undefined;
  /** Whether the stems that follow start a new hint set (OtherSubr 3 was called). */
  replacing = false;
  /** Whether closepath ended the subpath: a line or curve then starts one at the current point. */
  closed = false;
  ended = false;
  depth = 0;

  readonly glyphs: Glyphs;
  readonly out: Outline;
  /** Where the glyph is drawn: a seac accent is moved by its offset. */
  readonly dx: number;
  readonly dy: number;
  /** Whether this is a seac component (which may not use seac itself). */
  readonly component: boolean;
  /** Steps left for the glyph and its components: subroutines calling each other could run for ever. */
  readonly budget: { steps: number };

  constructor(glyphs: Glyphs, out: Outline, at: Placement, budget: { steps: number }) {
    this.glyphs = glyphs;
    this.out = out;
    this.dx = at.dx;
    this.dy = at.dy;
    this.component = at.component;
    this.budget = budget;
  }

  run(code: Uint8Array): void {
    if (++this.depth > 20) fail("subroutines nested too deep");
    for (let i = 0; i < code.length && !this.ended;) {
      if (--this.budget.steps < 0) fail("too many steps");
      const v = code[i]!;
      if (v >= 32) {
        i = this.number(code, i);
        continue;
      }
      i++;
      if (v === 12) {
        if (i >= code.length) fail("escape at the end");
        this.escape(code[i++]!);
      } else if (v === 10) {
        const n = this.pop();
        const subr = this.glyphs.subrs[n];
        if (!subr) fail(`no subroutine ${n}`);
        this.run(subr!);
      } else if (v === 11) break;
      else this.operator(v);
    }
    this.depth--;
  }

  number(code: Uint8Array, i: number): number {
    const v = code[i]!;
    if (v <= 246) this.stack.push(v - 139);
    else if (v <= 250) this.stack.push((v - 247) * 256 + code[i + 1]! + 108);
    else if (v <= 254) this.stack.push(-(v - 251) * 256 - code[i + 1]! - 108);
    else {
      if (i + 5 > code.length) fail("number at the end");
      this.stack.push((code[i + 1]! << 24) | (code[i + 2]! << 16) | (code[i + 3]! << 8) | code[i + 4]!);
      return i + 5;
    }
    if (v >= 247 && i + 2 > code.length) fail("number at the end");
    return i + (v >= 247 ? 2 : 1);
  }

  pop(): number {
    const v = this.stack.pop();
    return v === undefined ? fail("stack underflow") : v;
  }

  args(n: number): number[] {
    if (this.stack.length < n) fail("stack underflow");
    const taken = this.stack.slice(this.stack.length - n);
    this.stack.length = 0;
    return taken;
  }

  point(): [number, number] {
    return [this.x + this.dx, this.y + this.dy];
  }

  path(kind: "move" | "line", dx: number, dy: number): void {
    this.x += dx;
    this.y += dy;
    // Inside a flex the moves only place its points (OtherSubr 2 records each).
    if (kind === "move" && this.flexPoints) return;
    if (kind === "line") this.reopen(dx, dy);
    this.closed = false;
    this.out.ops.push({ kind, points: [this.point()] });
  }

  /** After closepath, a line or curve begins a new subpath where the last one ended (as FreeType draws it). */
  reopen(dx: number, dy: number): void {
    if (!this.closed) return;
    this.out.ops.push({ kind: "move", points: [[this.x - dx + this.dx, this.y - dy + this.dy]] });
    this.closed = false;
  }

  curve(d: number[]): void {
    this.reopen(0, 0);
    const points: [number, number][] = [];
    for (let k = 0; k < 6; k += 2) {
      this.x += d[k]!;
      this.y += d[k + 1]!;
      points.push([this.x + this.dx, this.y + this.dy]);
    }
    this.out.ops.push({ kind: "curve", points });
  }

  stem(list: [number, number][], set: "h" | "v", at: number, size: number): void {
    const hints = this.out.hintSets;
    if (this.replacing || hints.length === 0) {
      hints.push({ at: this.out.ops.length, h: new Set(), v: new Set() });
      this.replacing = false;
    }
    let index = 0;
    while (index < list.length && !(list[index]![0] === at && list[index]![1] === size)) index++;
    if (index === list.length) list.push([at, size]);
    hints[hints.length - 1]![set].add(index);
  }

  operator(op: number): void {
    const s = this.stack;
    switch (op) {
      // Operands by index, not destructured: an array pattern runs the iterator protocol, and
      // this code runs once a job, mostly before V8 optimises it.
      case 1: {
        const a = this.args(2);
        return this.stem(this.out.hstems, "h", a[0]! + this.sby + this.dy, a[1]!);
      }
      case 3: {
        const a = this.args(2);
        return this.stem(this.out.vstems, "v", a[0]! + this.sbx + this.dx, a[1]!);
      }
      case 4:
        return this.path("move", 0, this.args(1)[0]!);
      case 5: {
        const a = this.args(2);
        return this.path("line", a[0]!, a[1]!);
      }
      case 6:
        return this.path("line", this.args(1)[0]!, 0);
      case 7:
        return this.path("line", 0, this.args(1)[0]!);
      case 8:
        return this.curve(this.args(6));
      case 9:
        // closepath: Type 2 closes each subpath itself; the current point stays (as FreeType keeps it).
        s.length = 0;
        this.closed = true;
        return;
      case 13: {
        const a = this.args(2);
        return this.sidebearing(a[0]!, 0, a[1]!);
      }
      case 14:
        s.length = 0;
        this.ended = true;
        return;
      case 21: {
        const a = this.args(2);
        return this.path("move", a[0]!, a[1]!);
      }
      case 22:
        return this.path("move", this.args(1)[0]!, 0);
      case 30: {
        const a = this.args(4);
        return this.curve([0, a[0]!, a[1]!, a[2]!, a[3]!, 0]);
      }
      case 31: {
        const a = this.args(4);
        return this.curve([a[0]!, 0, a[1]!, a[2]!, 0, a[3]!]);
      }
      default:
        fail(`operator ${op}`);
    }
  }

  sidebearing(sbx: number, sby: number, wx: number): void {
    this.sbx = sbx;
    this.sby = sby;
    this.width = wx;
    this.x = sbx;
    this.y = sby;
  }

  escape(op: number): void {
    switch (op) {
      case 0: // dotsection: hint zones for dots, which Type 2 has no operator for.
        this.stack.length = 0;
        return;
      case 1: {
        const [x0, dx0, x1, dx1, x2, dx2] = this.args(6);
        for (const [x, dx] of [
          [x0!, dx0!],
          [x1!, dx1!],
          [x2!, dx2!],
        ] as const)
          this.stem(this.out.vstems, "v", x + this.sbx + this.dx, dx);
        return;
      }
      case 2: {
        const [y0, dy0, y1, dy1, y2, dy2] = this.args(6);
        for (const [y, dy] of [
          [y0!, dy0!],
          [y1!, dy1!],
          [y2!, dy2!],
        ] as const)
          this.stem(this.out.hstems, "h", y + this.sby + this.dy, dy);
        return;
      }
      case 6:
        return this.seac(this.args(5));
      case 7: {
        const a = this.args(4);
        return this.sidebearing(a[0]!, a[1]!, a[2]!);
      }
      case 12: {
        const b = this.pop();
        const a = this.pop();
        if (b === 0) fail("division by zero");
        this.stack.push(a / b);
        return;
      }
      case 16:
        return this.otherSubr();
      case 17: {
        const v = this.results.pop();
        this.stack.push(v === undefined ? fail("pop without a result") : v);
        return;
      }
      case 33: {
        const a = this.args(2);
        this.x = a[0]!;
        this.y = a[1]!;
        return;
      }
      default:
        fail(`operator 12 ${op}`);
    }
  }

  /** `args... n othersubr# callothersubr`: flex (0-2), hint replacement (3), counters (12, 13). */
  otherSubr(): void {
    const which = this.pop();
    const n = this.pop();
    if (n < 0 || n > this.stack.length) fail("stack underflow");
    const args = this.stack.splice(this.stack.length - n, n);
    if (which === 1) this.flexPoints = [];
    else if (which === 2) {
      if (!this.flexPoints) fail("flex point outside a flex");
      this.flexPoints!.push(this.point());
    } else if (which === 0) this.endFlex(args);
    else if (which === 3) {
      this.replacing = true;
      this.results = [args[0]!];
    } else if (which === 12 || which === 13) this.stack.length = 0;
    else fail(`OtherSubr ${which}`);
  }

  /** OtherSubr 0 (`depth x y`): seven recorded points, the first the reference, make two curves. */
  endFlex(args: number[]): void {
    const points = this.flexPoints;
    if (!points || points.length !== 7 || args.length !== 3) fail("malformed flex");
    this.flexPoints = undefined;
    this.out.ops.push({ kind: "flex", points: points!.slice(1), depth: args[0]! });
    // `pop pop setcurrentpoint` reads back the end point, x first.
    this.results = [args[2]!, args[1]!];
  }

  /** `asb adx ady bchar achar seac`: the base glyph, then the accent, drawn here. */
  seac([asb, adx, ady, bchar, achar]: number[]): void {
    const component = (code: number) => {
      const name = this.glyphs.standard.get(code);
      const program = name === undefined ? undefined : this.glyphs.charStrings.get(name);
      return program ?? fail(`seac component ${code}`);
    };
    if (this.component) fail("seac in a seac component");
    new Interpreter(this.glyphs, this.out, { dx: 0, dy: 0, component: true }, this.budget).run(component(bchar!));
    const at = { dx: this.sbx + adx! - asb!, dy: ady!, component: true };
    new Interpreter(this.glyphs, this.out, at, this.budget).run(component(achar!));
    // The two components' hints would mix in one set: the glyph goes unhinted instead.
    this.out.hstems.length = 0;
    this.out.vstems.length = 0;
    this.out.hintSets.length = 0;
    this.ended = true;
  }
}

/** A glyph's Type 1 charstring as an outline; undefined when it cannot be run. */
export function interpretType1(charString: Uint8Array, glyphs: Glyphs): Outline | undefined {
  const out: Outline = { width: 0, ops: [], hstems: [], vstems: [], hintSets: [] };
  const interpreter = new Interpreter(glyphs, out, { dx: 0, dy: 0, component: false }, { steps: MAX_STEPS });
  try {
    interpreter.run(charString);
  } catch (error) {
    if (error instanceof Failure) return undefined;
    throw error;
  }
  if (!interpreter.ended) return undefined;
  out.width = interpreter.width;
  return out;
}
