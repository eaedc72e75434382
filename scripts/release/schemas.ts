/**
 * JSON schemas for kubeconform from an API server's own OpenAPI v2 document (`GET /openapi/v2`),
 * so validation needs no download site: the schemas are exactly the API of the lane's server.
 *
 * kubeconform reads one standalone schema per kind and version, named as its `-schema-location`
 * template `{{ .ResourceKind }}{{ .KindSuffix }}.json` expands (e.g. `deployment-apps-v1.json`,
 * `service-v1.json`; kubeconform's pkg/registry schemaPath). The conversion does what
 * openapi2jsonschema does for yannh/kubernetes-json-schema's `-standalone-strict` sets:
 * - every `$ref` is inlined (standalone), a recursive reference becoming `{}` (any value);
 * - an object schema with `properties` and no `additionalProperties` gets
 *   `additionalProperties: false` (strict: an unknown or misspelt field fails);
 * - `int-or-string` (IntOrString) becomes string or integer, and resource.Quantity string or
 *   number, as the API server's decoders accept;
 * - descriptions are dropped (size).
 */

/** A JSON schema node of the OpenAPI document (loosely typed: the conversion is structural). */
export type SchemaNode = { [key: string]: unknown };

/** The parts of an OpenAPI v2 document read here. */
export interface OpenApiV2 {
  definitions: Record<string, SchemaNode>;
}

/** A group/version/kind as `x-kubernetes-group-version-kind` lists it (group '' is core). */
export interface Gvk {
  group: string;
  version: string;
  kind: string;
}

const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const REF_PREFIX = '#/definitions/';

/**
 * kubeconform's file name for a kind (its schemaPath with the KindSuffix template variable).
 * @returns e.g. `deployment-apps-v1.json`, `service-v1.json`, `networkpolicy-networking-v1.json`.
 */
export function schemaFileName(gvk: Gvk): string {
  const group = gvk.group === '' ? '' : `-${gvk.group.split('.')[0]?.toLowerCase() ?? ''}`;
  return `${gvk.kind.toLowerCase()}${group}-${gvk.version.toLowerCase()}.json`;
}

/**
 * The `apiVersion` of a manifest as a group and version.
 * @param apiVersion e.g. `apps/v1` or `v1`.
 */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/**
 * Finds the definition of a kind.
 * @returns the definition's name, or undefined when the server does not serve that kind.
 */
export function definitionOf(doc: OpenApiV2, gvk: Gvk): string | undefined {
  for (const [name, def] of Object.entries(doc.definitions)) {
    const gvks = def['x-kubernetes-group-version-kind'];
    if (Array.isArray(gvks) && gvks.some((g: Gvk) => g.group === gvk.group && g.version === gvk.version && g.kind === gvk.kind)) return name;
  }
  return undefined;
}

/**
 * Converts one definition into a standalone, strict schema.
 * @param doc the API server's OpenAPI v2 document.
 * @param name a key of `doc.definitions`.
 * @returns a JSON schema with no `$ref`.
 * @throws {Error} for a `$ref` to a definition the document lacks.
 */
export function standaloneSchema(doc: OpenApiV2, name: string): SchemaNode {
  const convert = (node: unknown, stack: readonly string[]): unknown => {
    if (Array.isArray(node)) return node.map((n) => convert(n, stack));
    if (node === null || typeof node !== 'object') return node;
    const obj = node as SchemaNode;
    const ref = obj['$ref'];
    if (typeof ref === 'string') {
      if (!ref.startsWith(REF_PREFIX)) throw new Error(`unsupported $ref ${ref}`);
      const target = ref.slice(REF_PREFIX.length);
      // JSONSchemaProps (CRDs) refers to itself: accept any value below the cycle.
      if (stack.includes(target)) return {};
      return definition(target, stack);
    }
    if (obj['format'] === 'int-or-string') return { oneOf: [{ type: 'string' }, { type: 'integer' }] };
    const out: SchemaNode = {};
    for (const [k, v] of Object.entries(obj)) {
      if (k === 'description' || k.startsWith('x-kubernetes-')) continue;
      out[k] = k === 'properties' && v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([p, s]) => [p, convert(s, stack)])) : convert(v, stack);
    }
    if (out['properties'] !== undefined && out['additionalProperties'] === undefined) out['additionalProperties'] = false;
    return out;
  };
  const definition = (target: string, stack: readonly string[]): SchemaNode => {
    if (target === QUANTITY) return { oneOf: [{ type: 'string' }, { type: 'number' }] };
    const def = doc.definitions[target];
    if (def === undefined) throw new Error(`$ref to missing definition ${target}`);
    return convert(def, [...stack, target]) as SchemaNode;
  };
  return { $schema: 'http://json-schema.org/schema#', ...definition(name, []) };
}

/**
 * The schemas kubeconform needs for a set of kinds.
 * @param doc the API server's OpenAPI v2 document.
 * @param kinds the kinds to validate (duplicates are fine).
 * @returns file name → schema, and the kinds the server does not serve (e.g. a CRD's kind that is
 *   not installed), which kubeconform cannot check and the caller must report.
 */
export function kubeconformSchemas(doc: OpenApiV2, kinds: readonly Gvk[]): { files: Map<string, SchemaNode>; missing: Gvk[] } {
  const files = new Map<string, SchemaNode>();
  const missing: Gvk[] = [];
  for (const gvk of kinds) {
    const file = schemaFileName(gvk);
    if (files.has(file) || missing.some((m) => schemaFileName(m) === file)) continue;
    const name = definitionOf(doc, gvk);
    if (name === undefined) missing.push(gvk);
    else files.set(file, standaloneSchema(doc, name));
  }
  return { files, missing };
}
