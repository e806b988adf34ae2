// Checks responses of the real stack against docs/openapi.yaml (OpenAPI 3.1), so the document
// customers generate clients from cannot drift from what the service answers.
//
//   import { specHttp, assertMatchesSpec } from './openapi.mjs';
//   const r = await specHttp('GET', '/api/v1/users?page_size=10', { headers });  // http() + check
//   assertMatchesSpec('POST', '/api/v1/organizations', r);                       // check only
//
// A response matches when the document has the operation (path template + method), a response
// object for its status (the exact code, else `4XX`/`5XX`, else `default`), and the body fits:
// the Content-Type must be one the response object lists and the JSON must validate against its
// schema (JSON Schema 2020-12, which OpenAPI 3.1 uses, through Ajv, `$ref`s resolved inside
// the document); a response object without `content` requires an empty body. An undocumented
// operation or status is a failure too.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import YAML from 'yaml';
import { http, repoDir } from './harness.mjs';

export const specFile = path.join(repoDir, 'docs', 'openapi.yaml');
export const spec = YAML.parse(readFileSync(specFile, 'utf8'));
const SPEC_ID = 'https://portcullis.invalid/openapi.yaml';

// strict: false because the document's other members (paths, info...) are not JSON Schema
// keywords; Ajv ignores them and only compiles what a $ref reaches.
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ ...spec, $id: SPEC_ID });
const compiled = new Map();

const escapePointer = (s) => s.replace(/~/g, '~0').replace(/\//g, '~1');

// Follows a local `$ref` ("#/components/responses/Problem") to the object it names.
function deref(obj) {
  let seen = 0;
  while (obj && typeof obj.$ref === 'string') {
    if (!obj.$ref.startsWith('#/') || ++seen > 10) throw new Error(`cannot follow $ref ${obj.$ref}`);
    obj = obj.$ref
      .slice(2)
      .split('/')
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((o, key) => o?.[key], spec);
  }
  return obj;
}

// The path template of the document that `pathname` (no query) instantiates; literal
// segments win over parameters, as OpenAPI requires.
function findTemplate(pathname) {
  const candidates = [];
  for (const template of Object.keys(spec.paths ?? {})) {
    const t = template.split('/');
    const p = pathname.split('/');
    if (t.length !== p.length) continue;
    let params = 0;
    const ok = t.every((seg, i) => {
      if (/^\{[^}]+\}$/.test(seg)) {
        params++;
        return p[i] !== '';
      }
      return seg === p[i];
    });
    if (ok) candidates.push({ template, params });
  }
  candidates.sort((a, b) => a.params - b.params);
  return candidates[0]?.template;
}

function validator(pointer) {
  if (!compiled.has(pointer)) compiled.set(pointer, ajv.compile({ $ref: `${SPEC_ID}#${pointer}` }));
  return compiled.get(pointer);
}

// The problems with response `r` ({status, headers, text, json} as harness.http returns it)
// to `method pathname`; an empty array when it matches the document.
export function specProblems(method, pathname, r) {
  const bare = pathname.split('?')[0];
  const template = findTemplate(bare);
  if (!template) return [`${bare} is not in docs/openapi.yaml`];
  const op = spec.paths[template][method.toLowerCase()];
  if (!op) return [`${method} ${template} is not in docs/openapi.yaml`];
  const code = String(r.status);
  const key = [code, `${code[0]}XX`, 'default'].find((k) => op.responses?.[k]);
  if (!key) return [`${method} ${template} documents no ${code} response`];
  const response = deref(op.responses[key]);
  const where = `${method} ${template} ${code}`;
  if (!response.content) {
    return r.text === '' ? [] : [`${where}: the document promises no body, got ${r.text.slice(0, 200)}`];
  }
  const type = (r.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  const media = response.content[type];
  if (!media) return [`${where}: Content-Type ${type} is not one of ${Object.keys(response.content)}`];
  if (!media.schema) return [];
  if (r.json === undefined) return [`${where}: the body is not JSON`];
  const opRef = op.responses[key].$ref;
  const pointer = opRef
    ? `${opRef.slice(1)}/content/${escapePointer(type)}/schema`
    : `/paths/${escapePointer(template)}/${method.toLowerCase()}/responses/${key}/content/${escapePointer(type)}/schema`;
  const validate = validator(pointer);
  if (validate(r.json)) return [];
  return validate.errors.map((e) => `${where}: ${e.instancePath || '(body)'} ${e.message} ${JSON.stringify(e.params)}`);
}

// Throws (an AssertionError-like Error naming every problem) unless `r` matches the document.
export function assertMatchesSpec(method, pathname, r) {
  const problems = specProblems(method, pathname, r);
  if (problems.length) {
    const err = new Error(`response does not match docs/openapi.yaml:\n  ${problems.join('\n  ')}\nbody: ${r.text.slice(0, 500)}`);
    err.code = 'ERR_ASSERTION';
    throw err;
  }
}

// harness.http() followed by assertMatchesSpec(): every response of a test checked in one call.
export async function specHttp(method, pathname, options = {}) {
  const r = await http(pathname, { ...options, method });
  assertMatchesSpec(method, pathname, r);
  return r;
}
