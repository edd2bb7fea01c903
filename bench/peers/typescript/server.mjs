// Benchmark peer: the coffee tools on the official TypeScript SDK, Express, stateless JSON
// (a fresh server and transport per request, as the SDK's stateless example does).
// Usage: node server.mjs PORT MENU.xlsx
import express from "express";
import ExcelJS from "exceljs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

const [port = "18203", menuPath = "examples/coffee/menu.xlsx"] = process.argv.slice(2);

const workbook = new ExcelJS.Workbook();
await workbook.xlsx.readFile(menuPath);
const sheet = workbook.worksheets[0];
const header = sheet.getRow(1).values.map((v) => String(v ?? "").trim().toLowerCase());
const col = (name) => header.indexOf(name);
const drinks = [];
sheet.eachRow((row, number) => {
  if (number === 1 || !row.getCell(col("напиток")).value) return;
  drinks.push({
    drink: String(row.getCell(col("напиток")).value),
    price: Number(row.getCell(col("цена")).value),
    minutes: Number(row.getCell(col("время_приготовления_мин")).value),
    composition: String(row.getCell(col("состав")).value ?? ""),
  });
});
const fold = (s) => s.toLowerCase().replaceAll("ё", "е");
const folded = drinks.map((d) => [d, fold(d.drink + " " + d.composition)]);

function server() {
  const mcp = new McpServer({ name: "coffee-typescript", version: "1.0.0" });
  const answer = (results) => ({ content: [{ type: "text", text: JSON.stringify({ results }) }], structuredContent: { results } });
  mcp.registerTool("get_menu", { description: "The whole menu." }, async () => answer(drinks));
  mcp.registerTool(
    "search_menu",
    { description: "Drinks whose name or composition contain a keyword.", inputSchema: { query: z.string() } },
    async ({ query }) => answer(folded.filter(([, text]) => text.includes(fold(query))).map(([d]) => d)),
  );
  return mcp;
}

const app = express();
app.use(express.json());
app.post("/mcp", async (req, res) => {
  const mcp = server();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => {
    transport.close();
    mcp.close();
  });
  await mcp.connect(transport);
  await transport.handleRequest(req, res, req.body);
});
app.listen(Number(port), "127.0.0.1", () => console.log(`typescript listening on http://127.0.0.1:${port}`));
