import type { Command } from "commander";
import type { RpcRequest } from "../../sdk/src/index.js";
import type { CliContext } from "../context.js";
import { wholeNumberOf } from "../flag-values.js";
import { itemsTable, timeText } from "../output.js";
import type { Run } from "../run.js";
import { deleteCommand } from "./delete-command.js";
import { choiceOption, idOf } from "../choices.js";
import { NodeStatus } from "../../../shared/contract/index.js";

export function registerNodeCommands(program: Command, run: Run): void {
  const nodes = program.command("nodes").description("The business's nodes: list, drain, rotate a node's key");
  nodeListCommand(nodes, run);
  nodeDrainCommand(nodes, run);
  deleteCommand(nodes, run, "node", "Delete an offline node; its keys stop working", (client, id) =>
    client.nodes.delete(id),
  );
  nodeRotateKeyCommand(nodes, run);
}

function nodeListCommand(nodes: Command, run: Run): void {
  nodes
    .command("ls")
    .alias("list")
    .description("Nodes with their state, capacity and use")
    .option("--pool <pool>", "only this pool")
    .addOption(choiceOption("--state <state>", "only nodes in this state", NodeStatus.options))
    .option("--all", "also nodes offline for long (hidden by default)")
    .action(
      run(async (ctx: CliContext, options: { pool?: string; state?: string; all?: boolean }) => {
        const request = {
          ...(options.pool ? { pool_id: options.pool } : {}),
          ...(options.state ? { state: options.state } : {}),
          ...(options.all ? { include_offline: true } : {}),
        };
        const { items } = await ctx.client().nodes.list(request as RpcRequest<"listNodes">);
        ctx.print({ items }, () =>
          itemsTable(
            ctx.colors,
            items,
            "No nodes.\n",
            ["NODE", "NAME", "POOL", "STATE", "SLOTS", "CPU", "MEMORY MB", "LAST HEARTBEAT"],
            (node) => [
              node.node_id,
              node.name,
              node.pool_id,
              node.state,
              `${node.used.slots}/${node.capacity.slots}`,
              `${node.used.cpu}/${node.capacity.cpu}`,
              `${node.used.memory_mb}/${node.capacity.memory_mb}`,
              timeText(node.last_heartbeat_at),
            ],
          ),
        );
      }),
    );
}

function nodeDrainCommand(nodes: Command, run: Run): void {
  nodes
    .command("drain")
    .description("Stop giving a node new jobs (running jobs finish); --undo resumes it")
    .argument("<node>", "the node id", idOf("node"))
    .option("--undo", "lift the drain")
    .action(
      run(async (ctx: CliContext, nodeId: string, options: { undo?: boolean }) => {
        const answer = await ctx.client().nodes.drain({ node_id: nodeId, draining: options.undo !== true });
        ctx.print(answer, () => `${nodeId} ${options.undo ? "resumed" : "draining"}\n`);
      }),
    );
}

function nodeRotateKeyCommand(nodes: Command, run: Run): void {
  nodes
    .command("rotate-key")
    .description("A new key for a node; prints it once. The old key works for --grace seconds")
    .argument("<node>", "the node id", idOf("node"))
    .option("--grace <seconds>", "how long the old key keeps working", "0")
    .action(
      run(async (ctx: CliContext, nodeId: string, options: { grace: string }) => {
        const graceSeconds = wholeNumberOf("--grace", options.grace, "whole seconds") ?? 0;
        const rotated = await ctx.client().nodes.rotateKey({ node_id: nodeId, grace_seconds: graceSeconds });
        ctx.print(rotated, () => `${rotated.api_key}\n`);
        if (!ctx.json)
          ctx.note(
            ctx.colors.dim(
              `The previous key stops working at ${timeText(rotated.previous_key_expires_at)}. Store this one now: it is not shown again.`,
            ),
          );
      }),
    );
}
