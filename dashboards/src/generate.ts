// Writes every dashboard as Grafana JSON into the directory named on the
// command line (dashboards/grafana/ is the committed copy; the test writes
// a temporary one and compares them byte for byte).
import * as fs from "fs";
import * as path from "path";
import { fleet } from "./fleet";
import { host } from "./host";
import { ptt } from "./ptt";
import { intelIio } from "./iio";
import { collector } from "./collector";

const boards: [string, () => object][] = [
	["pcie-fleet-overview", fleet],
	["pcie-host", host],
	["pcie-ptt-traces", ptt],
	["pcie-intel-iio", intelIio],
	["pcie-collector-health", collector],
];

const out = process.argv[2];
if (!out) {
	console.error("usage: node generate.js OUTPUT_DIR");
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
