// Part of `npm run build` (scripts/bundle-cli.mjs): the CommonJS copies of the bundle's chunks read each other's
// exports through local variables instead of getters, wherever that cannot change what the code does.
//
// esbuild converts a chunk that was an ES module so that its imports stay live bindings: every use of an imported
// name, `(0, import_chunk_X.name)(...)`, calls a getter of the exporting chunk's `module.exports` (`() => name`, one
// of several hundred accessors; esbuild's own form adds a second hop, which bundle-cli.mjs removes). It runs on every
// call into Effect from another chunk: in `myclaw serve` under load that was a few percent of the process's time,
// which the ES modules do not pay.
//
// A name is read once, right after the `require` of its chunk, into `var import_chunk_X$$name`, and the uses read
// that variable, when the value cannot differ later:
// - the exporting chunk has run to its end when the `require` returns: it is not in a cycle of top-level requires
//   with the importing chunk (a `require` inside a function, such as a dynamic import, runs after both);
// - the exported binding is final once its chunk has run: declared once at the chunk's top level, with its value
//   (`const`, `function`, `class`, or `let`/`var` with an initialiser), and assigned nowhere in the chunk (any
//   assignment to that name, even to another variable of the same name in an inner scope, keeps the getter).
// Anything else keeps esbuild's form. The check is over the syntax tree (acorn), so strings and comments do not
// count.
import * as acorn from 'acorn';

/** The call if `node` is `<callee>(...)`, with `callee` a plain name. */
const callOf = (node, callee) =>
  node?.type === 'CallExpression' && node.callee.type === 'Identifier' && node.callee.name === callee ? node : undefined;

/**
 * How each export of a chunk reaches its local binding: the names of `__export(<object>, { name: () => local })`
 * for the object published as `module.exports = __toCommonJS(<object>)` (other `__export` calls fill namespace
 * objects, whose names are not the chunk's). None when the chunk publishes its exports some other way.
 */
const exportsOf = (program) => {
  let published;
  for (const statement of program.body) {
    const assignment = statement.type === 'ExpressionStatement' ? statement.expression : undefined;
    if (
      assignment?.type === 'AssignmentExpression' &&
      assignment.left.type === 'MemberExpression' &&
      assignment.left.object.type === 'Identifier' &&
      assignment.left.object.name === 'module' &&
      assignment.left.property.type === 'Identifier' &&
      assignment.left.property.name === 'exports'
    ) {
      const argument = callOf(assignment.right, '__toCommonJS')?.arguments[0];
      // Published twice, or not through __toCommonJS: not a chunk as esbuild converts them.
      if (published !== undefined || argument?.type !== 'Identifier') return new Map();
      published = argument.name;
    }
  }
  const locals = new Map();
  if (published === undefined) return locals;
  for (const statement of program.body) {
    const call = callOf(statement.type === 'ExpressionStatement' ? statement.expression : undefined, '__export');
    const [target, names] = call?.arguments ?? [];
    if (target?.type !== 'Identifier' || target.name !== published) continue;
    if (names?.type !== 'ObjectExpression') return new Map();
    for (const property of names.properties) {
      if (property.type !== 'Property' || property.computed) continue;
      const key = property.key.type === 'Identifier' ? property.key.name : String(property.key.value);
      const getter = property.value;
      if (getter.type === 'ArrowFunctionExpression' && getter.body.type === 'Identifier') locals.set(key, getter.body.name);
    }
  }
  return locals;
};

/** The names a pattern binds or assigns. */
const namesOf = (pattern, out) => {
  if (pattern === null || pattern === undefined) return out;
  switch (pattern.type) {
    case 'Identifier':
      out.push(pattern.name);
      break;
    case 'ObjectPattern':
      for (const property of pattern.properties) namesOf(property.type === 'RestElement' ? property.argument : property.value, out);
      break;
    case 'ArrayPattern':
      for (const element of pattern.elements) namesOf(element, out);
      break;
    case 'RestElement':
      namesOf(pattern.argument, out);
      break;
    case 'AssignmentPattern':
      namesOf(pattern.left, out);
      break;
  }
  return out;
};

/** Every node of the tree, with its parent; the children of a node for which `visit` returns false are skipped. */
const walk = (node, visit, parent = null) => {
  if (visit(node, parent) === false) return;
  for (const key in node) {
    const value = node[key];
    if (Array.isArray(value)) {
      for (const child of value) if (child !== null && typeof child?.type === 'string') walk(child, visit, node);
    } else if (value !== null && typeof value?.type === 'string' && key !== 'type') {
      walk(value, visit, node);
    }
  }
};

const CHUNK_REQUIRE = /^\.\/([^/]+\.cjs)$/;

/** The chunk `node` requires if it is `require("./<chunk>.cjs")`. */
const chunkRequiredBy = (node) => {
  const source = callOf(node, 'require')?.arguments;
  return source?.length === 1 && source[0].type === 'Literal' && typeof source[0].value === 'string'
    ? CHUNK_REQUIRE.exec(source[0].value)?.[1]
    : undefined;
};

/** `var <name> = require("./<chunk>.cjs")` at the top level: the name and the chunk. */
const requireOf = (statement) => {
  if (statement.type !== 'VariableDeclaration' || statement.declarations.length !== 1) return undefined;
  const [declarator] = statement.declarations;
  const chunk = chunkRequiredBy(declarator.init);
  return chunk === undefined || declarator.id.type !== 'Identifier'
    ? undefined
    : { name: declarator.id.name, chunk, end: statement.end };
};

const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);

/**
 * The chunks a chunk requires while it runs, in whatever form (`var x = require(...)`, a bare `require(...)`,
 * `__toESM(require(...))`): every `require` of a chunk outside a function body. One inside a function (a dynamic
 * import) runs later, once both chunks have run.
 */
const topLevelRequires = (program) => {
  const chunks = [];
  walk(program, (node) => {
    const chunk = chunkRequiredBy(node);
    if (chunk !== undefined) chunks.push(chunk);
    return !FUNCTIONS.has(node.type);
  });
  return chunks;
};

/** The strongly connected components of the graph of top-level requires (Tarjan): chunk -> component number. */
const components = (edges) => {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const component = new Map();
  let next = 0;
  let count = 0;
  const visit = (chunk) => {
    index.set(chunk, next);
    low.set(chunk, next);
    next += 1;
    stack.push(chunk);
    onStack.add(chunk);
    for (const to of edges.get(chunk) ?? []) {
      if (!edges.has(to)) continue;
      if (!index.has(to)) {
        visit(to);
        low.set(chunk, Math.min(low.get(chunk), low.get(to)));
      } else if (onStack.has(to)) {
        low.set(chunk, Math.min(low.get(chunk), index.get(to)));
      }
    }
    if (low.get(chunk) === index.get(chunk)) {
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.set(member, count);
      } while (member !== chunk);
      count += 1;
    }
  };
  for (const chunk of edges.keys()) if (!index.has(chunk)) visit(chunk);
  return component;
};

/**
 * `chunks`: file name -> the CommonJS code esbuild made of it (`require("./<file>")` between them). Returns the
 * code with the aliases, how many uses read an alias and how many kept the getter.
 */
export function aliasImports(chunks) {
  // Only chunks that require others or are required by one can take part: the others (data such as a tokenizer's
  // tables, chunks only imported dynamically) are not parsed.
  const requiredSomewhere = new Set();
  for (const code of chunks.values()) {
    for (const match of code.matchAll(/^var \w+ = require\("\.\/([^"/]+\.cjs)"\);$/gm)) requiredSomewhere.add(match[1]);
  }
  const parsed = new Map();
  for (const [name, code] of chunks) {
    if (!code.includes('require("./') && !requiredSomewhere.has(name)) continue;
    const program = acorn.parse(code, { ecmaVersion: 'latest', sourceType: 'script', allowReturnOutsideFunction: true });
    const declarations = new Map();
    const declare = (local, withValue) => declarations.set(local, (declarations.get(local) ?? 0) + (withValue ? 1 : 2));
    for (const statement of program.body) {
      if (statement.type === 'VariableDeclaration') {
        for (const declarator of statement.declarations) {
          for (const local of namesOf(declarator.id, [])) declare(local, declarator.init !== null || statement.kind === 'const');
        }
      } else if ((statement.type === 'FunctionDeclaration' || statement.type === 'ClassDeclaration') && statement.id !== null) {
        declare(statement.id.name, true);
      }
    }
    const assigned = new Set();
    walk(program, (node) => {
      if (node.type === 'AssignmentExpression') for (const local of namesOf(node.left, [])) assigned.add(local);
      else if (node.type === 'UpdateExpression' && node.argument.type === 'Identifier') assigned.add(node.argument.name);
      else if ((node.type === 'ForInStatement' || node.type === 'ForOfStatement') && node.left.type !== 'VariableDeclaration') {
        for (const local of namesOf(node.left, [])) assigned.add(local);
      }
    });
    const locals = exportsOf(program);
    const final = new Set();
    for (const [exported, local] of locals) {
      if (declarations.get(local) === 1 && !assigned.has(local)) final.add(exported);
    }
    parsed.set(name, { code, program, assigned, final, requires: topLevelRequires(program) });
  }
  const component = components(new Map([...parsed].map(([name, chunk]) => [name, chunk.requires])));

  let aliased = 0;
  let kept = 0;
  const out = new Map(chunks);
  for (const [name, { code, program, assigned }] of parsed) {
    const required = new Map();
    for (const statement of program.body) {
      const declared = requireOf(statement);
      if (declared !== undefined && !assigned.has(declared.name)) required.set(declared.name, declared);
    }
    const edits = [];
    const aliases = new Map();
    walk(program, (node, parent) => {
      if (node.type !== 'MemberExpression' || node.computed || node.object.type !== 'Identifier') return;
      const source = required.get(node.object.name);
      if (source === undefined) return;
      const target = parsed.get(source.chunk);
      const written = parent !== null && (
        (parent.type === 'AssignmentExpression' && parent.left === node) ||
        parent.type === 'UpdateExpression' ||
        (parent.type === 'UnaryExpression' && parent.operator === 'delete')
      );
      if (target === undefined || written || component.get(source.chunk) === component.get(name) ||
        !target.final.has(node.property.name)) {
        kept += 1;
        return;
      }
      const alias = `${source.name}$$${node.property.name}`;
      const names = aliases.get(source.name) ?? new Map();
      aliases.set(source.name, names);
      names.set(node.property.name, alias);
      edits.push({ start: node.start, end: node.end, text: alias });
      aliased += 1;
    });
    for (const [variable, names] of aliases) {
      for (const alias of names.values()) {
        if (code.includes(alias)) throw new Error(`${name}: the name ${alias} is already used: cannot alias ${variable}`);
      }
      const at = required.get(variable).end;
      const declarations = [...names].map(([exported, alias]) => `${alias} = ${variable}.${exported}`).join(', ');
      edits.push({ start: at, end: at, text: `\nvar ${declarations};` });
    }
    // Offsets are those of the original text: the pieces between the edits are copied in order.
    edits.sort((a, b) => a.start - b.start || a.end - b.end);
    const pieces = [];
    let from = 0;
    for (const edit of edits) {
      pieces.push(code.slice(from, edit.start), edit.text);
      from = edit.end;
    }
    pieces.push(code.slice(from));
    out.set(name, pieces.join(''));
  }
  return { chunks: out, aliased, kept };
}
