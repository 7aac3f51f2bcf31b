import { parse, validate, specifiedRules } from 'graphql';
import { schema } from '../schema/index.js';
for (const n of [200, 300, 500, 700]) {
  const doc = parse(`{ workspaces { ${Array(n).fill('id').join(' ')} } }`);
  const errs = validate(schema, doc);
  console.log(n, errs.length, errs[0]?.message);
}
// which rule
const doc = parse(`{ workspaces { ${Array(1000).fill('id').join(' ')} } }`);
for (const rule of specifiedRules) {
  const t0 = Date.now();
  const errs = validate(schema, doc, [rule]);
  if (errs.length) console.log(rule.name, errs.length, errs[0].message, Date.now() - t0);
}
