// count.mjs prints the o200k_base token count of a JSON document rendered
// as TOON (and, to check the Go tokenizer against js-tiktoken, of the same
// document as compact JSON). Usage: node count.mjs FILE.json [--delimiter=tab]
import { readFileSync } from 'node:fs';
import { encode } from '@toon-format/toon';
import { getEncoding } from 'js-tiktoken';

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('--'));
if (!file) {
  console.error('usage: node count.mjs FILE.json [--delimiter=tab]');
  process.exit(2);
}
const opts = {};
if (args.includes('--delimiter=tab')) opts.delimiter = '\t';

const text = readFileSync(file, 'utf8');
const data = JSON.parse(text);
const toon = encode(data, opts);
const enc = getEncoding('o200k_base');
const count = (s) => enc.encode(s, [], []).length;

console.log(`toon\t${count(toon)}\t${Buffer.byteLength(toon)} bytes`);
console.log(`json\t${count(JSON.stringify(data))}\t(compact JSON of the same file, for comparison)`);
