-- The editor's problems forwarded by a real Neovim 0.7+ (headless), with the snippet of docs/modes.md,
-- driven by tests/e2e/editors/test_problems_editors.py:
--
--   timeout 60 nvim --headless -u NONE -i NONE -c "luafile tests/e2e/editors/problems_e2e.lua"
--
-- Inputs (environment): AGENT_LS_E2E_PYTHON, AGENT_LS_E2E_ROOT, AGENT_LS_E2E_FILE, AGENT_LS_E2E_BASE_URL,
-- AGENT_LS_E2E_RESULT as for agent_ls_e2e.lua, and AGENT_LS_E2E_SNIPPET (a Lua file returning the
-- docs' forward_problems). Sets diagnostics of another source (and one of agent-ls's own) on the file,
-- forwards them with the snippet, then runs a task whose scripted model calls `problems`.

local env = vim.env
local result = { started = vim.NIL, run_ended = vim.NIL, error = vim.NIL }

local lib = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/agent_ls_client.lua")
local wait, request = lib.wait, lib.request

local function main()
  vim.cmd("edit " .. vim.fn.fnameescape(env.AGENT_LS_E2E_FILE))
  local bufnr = vim.api.nvim_get_current_buf()
  local client_id, client = lib.start(bufnr, function(params) result.run_ended = params end)

  local forward_problems = dofile(env.AGENT_LS_E2E_SNIPPET)
  -- An empty buffer of its own first: its empty list goes out as Lua's empty table.
  vim.cmd("badd " .. vim.fn.fnameescape(env.AGENT_LS_E2E_ROOT .. "/empty.py"))
  vim.fn.bufload(vim.fn.bufnr(env.AGENT_LS_E2E_ROOT .. "/empty.py"))
  forward_problems(client_id)
  local ns = vim.api.nvim_create_namespace("other-language-server")
  vim.diagnostic.set(ns, bufnr, {
    { lnum = 7, col = 11, end_lnum = 7, end_col = 42, severity = vim.diagnostic.severity.ERROR,
      message = "Possible off-by-one", source = "pyright" },
    { lnum = 0, col = 0, end_lnum = 0, end_col = 3, severity = vim.diagnostic.severity.WARN,
      message = "our own finding, never echoed", source = "agent-ls review" },
  })

  result.started = request(client, bufnr, "workspace/executeCommand",
    { command = "agent.run", arguments = { { task = "What does the editor report?" } } })
  wait("agent/runEnded", 30000, function()
    return result.run_ended ~= vim.NIL and result.run_ended.sessionId == result.started.sessionId
  end)
end

local ok, err = pcall(main)
if not ok then result.error = tostring(err) end
local file = assert(io.open(env.AGENT_LS_E2E_RESULT, "w"))
file:write(vim.fn.json_encode(result))
file:close()
vim.cmd("qa!")
