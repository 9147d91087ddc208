// Sizes (issue 32): lists the source files under src/ (tests left out) over 400 lines and the functions over 80 lines.
// Usage: node scripts/sizes.mjs [folder]. A nested function counts on its own and inside its parent.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
const root = process.argv[2] ?? 'src';
const files = [];
(function walk(d) {
  for (const e of readdirSync(d, { withFileTypes: true })) {
    const p = path.join(d, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'fixtures') walk(p);
    } else if (p.endsWith('.ts') && !p.endsWith('.test.ts') && !p.endsWith('.d.ts')) files.push(p);
  }
})(root);
const big = [],
  fns = [];
for (const f of files) {
  const text = readFileSync(f, 'utf8');
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  if (lines > 400) big.push([lines, f]);
  const sf = ts.createSourceFile(f, text, ts.ScriptTarget.Latest, true);
  const visit = (n) => {
    if (
      ts.isFunctionDeclaration(n) ||
      ts.isMethodDeclaration(n) ||
      ts.isArrowFunction(n) ||
      ts.isFunctionExpression(n) ||
      ts.isConstructorDeclaration(n) ||
      ts.isGetAccessor(n)
    ) {
      if (n.body) {
        const a = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line,
          b = sf.getLineAndCharacterOfPosition(n.end).line;
        const len = b - a + 1;
        if (len > 80) {
          let name = n.name?.getText?.(sf);
          if (!name && ts.isVariableDeclaration(n.parent)) name = n.parent.name.getText(sf);
          if (!name && ts.isPropertyAssignment(n.parent)) name = n.parent.name.getText(sf);
          fns.push([len, `${f}:${a + 1} ${name ?? '(anonymous)'}`]);
        }
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
}
big.sort((x, y) => y[0] - x[0]);
fns.sort((x, y) => y[0] - x[0]);
console.log(`files over 400 lines: ${big.length}`);
for (const [n, f] of big) console.log(`  ${n} ${f}`);
console.log(`functions over 80 lines: ${fns.length}`);
for (const [n, f] of fns) console.log(`  ${n} ${f}`);
