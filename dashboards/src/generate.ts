// Writes every dashboard as Grafana JSON into the directory named first on
// the command line, and the recording rules the fleet overview reads
// (records.ts) as pcie.records.yml into the second (dashboards/grafana/ and
// dashboards/alerts/ are the committed copies; the test writes temporary
// ones and compares them byte for byte).
import * as fs from "fs";
import * as path from "path";
import { fleet } from "./fleet";
import { host } from "./host";
import { ptt } from "./ptt";
import { intelIio } from "./iio";
import { collector } from "./collector";
import { recordsYaml } from "./records";

const boards: [string, () => object][] = [
	["pcie-fleet-overview", fleet],
	["pcie-host", host],
	["pcie-ptt-traces", ptt],
	["pcie-intel-iio", intelIio],
	["pcie-collector-health", collector],
];

const out = process.argv[2];
const rulesOut = process.argv[3];
if (!out || !rulesOut) {
	console.error("usage: node generate.js DASHBOARD_DIR RULES_DIR");
	process.exit(2);
}
fs.mkdirSync(out, { recursive: true });
for (const [name, make] of boards) {
	const file = path.join(out, `${name}.json`);
	const board = make() as { panels?: { id?: number }[] };
	// Stable panel ids (links to a panel, and Grafana versions that do not
	// number panels themselves on import).
	(board.panels ?? []).forEach((p, i) => (p.id = i + 1));
	fs.writeFileSync(file, JSON.stringify(board, null, 2) + "\n");
	console.log(`wrote ${file}`);
}
fs.mkdirSync(rulesOut, { recursive: true });
const rulesFile = path.join(rulesOut, "pcie.records.yml");
fs.writeFileSync(rulesFile, recordsYaml());
console.log(`wrote ${rulesFile}`);
