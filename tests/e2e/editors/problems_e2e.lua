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

local function wait(what, ms, predicate)
  if not vim.wait(ms, predicate, 20) then
    error("timed out after " .. ms .. " ms waiting for " .. what)
  end
end

local function main()
  vim.cmd("edit " .. vim.fn.fnameescape(env.AGENT_LS_E2E_FILE))
  local bufnr = vim.api.nvim_get_current_buf()
  local client_id = vim.lsp.start_client({
    name = "agent-ls",
    cmd = { env.AGENT_LS_E2E_PYTHON, "-m", "agent_ls", "serve" },
    root_dir = env.AGENT_LS_E2E_ROOT,
    init_options = { agentLs = { model = "openai/test-model", baseUrl = env.AGENT_LS_E2E_BASE_URL } },
    handlers = {
      ["window/showMessageRequest"] = function() return vim.NIL end,
      ["window/logMessage"] = function() end,
      ["agent/event"] = function() end,
      ["agent/runEnded"] = function(_, params) result.run_ended = params end,
    },
  })
  assert(client_id, "vim.lsp.start_client failed")
  assert(vim.lsp.buf_attach_client(bufnr, client_id), "buf_attach_client failed")
  local client = vim.lsp.get_client_by_id(client_id)
  wait("initialize", 20000, function() return client.initialized end)

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

  local response = nil
  client.request("workspace/executeCommand",
    { command = "agent.run", arguments = { { task = "What does the editor report?" } } },
    function(err, res) response = err and { error = vim.inspect(err) } or { result = res } end, bufnr)
  wait("agent.run", 20000, function() return response ~= nil end)
  if response.error then error("agent.run failed: " .. response.error) end
  result.started = response.result
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
