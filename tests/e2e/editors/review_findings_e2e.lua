-- Review findings as diagnostics in a real Neovim 0.7+ (headless), driven by
-- tests/e2e/editors/test_review_findings_editors.py:
--
--   timeout 60 nvim --headless -u NONE -i NONE -c "luafile tests/e2e/editors/review_findings_e2e.lua"
--
-- Inputs (environment): AGENT_LS_E2E_PYTHON, AGENT_LS_E2E_ROOT, AGENT_LS_E2E_FILE, AGENT_LS_E2E_BASE_URL,
-- AGENT_LS_E2E_RESULT as for agent_ls_e2e.lua, and AGENT_LS_E2E_FINDINGS (how many diagnostics to wait
-- for). Runs /code-review on the file (agent.runSkill), waits for the run's end and for the findings in
-- vim.diagnostic, then asks for the code actions on the first finding's line with the diagnostics
-- Neovim holds there (as its code-action mapping does).

local env = vim.env
local result = {
  editor = "neovim " .. tostring(vim.version().major) .. "." .. tostring(vim.version().minor),
  started = vim.NIL,
  run_ended = vim.NIL,
  diagnostics = vim.NIL, -- vim.diagnostic.get(bufnr): {lnum, end_lnum, col, end_col, severity, message, source}
  actions = vim.NIL, -- {title, kind, command, arguments} of each code action on the first finding's line
  error = vim.NIL,
}

local lib = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/agent_ls_client.lua")
local wait, request = lib.wait, lib.request

local function main()
  vim.lsp.set_log_level("debug")
  vim.cmd("edit " .. vim.fn.fnameescape(env.AGENT_LS_E2E_FILE))
  local bufnr = vim.api.nvim_get_current_buf()
  local uri = vim.uri_from_bufnr(bufnr)
  local client_id, client = lib.start(bufnr, function(params) result.run_ended = params end)

  local started = request(client, bufnr, "workspace/executeCommand",
    { command = "agent.runSkill", arguments = { { skill = "code-review", uri = uri } } })
  result.started = started
  wait("agent/runEnded", 30000, function()
    return result.run_ended ~= vim.NIL and result.run_ended.sessionId == started.sessionId
  end)
  local wanted = tonumber(env.AGENT_LS_E2E_FINDINGS)
  wait("the findings as diagnostics", 15000, function() return #vim.diagnostic.get(bufnr) >= wanted end)
  local shown = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(shown, { lnum = d.lnum, end_lnum = d.end_lnum, col = d.col, end_col = d.end_col,
      severity = d.severity, message = d.message, source = d.source })
  end
  table.sort(shown, function(a, b) return a.lnum < b.lnum end)
  result.diagnostics = shown

  local line = shown[1].lnum
  local actions = request(client, bufnr, "textDocument/codeAction", {
    textDocument = { uri = uri },
    range = { start = { line = line, character = 0 }, ["end"] = { line = line, character = 0 } },
    context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(bufnr, line) },
  })
  result.actions = {}
  for _, action in ipairs(actions) do
    local command = action.command or {}
    table.insert(result.actions, { title = action.title, kind = action.kind or vim.NIL,
      command = command.command or vim.NIL, arguments = command.arguments or vim.NIL })
  end
  vim.lsp.stop_client(client_id)
  vim.wait(3000, function() return vim.lsp.client_is_stopped(client_id) end, 20)
end

local ok, err = xpcall(main, debug.traceback)
if not ok then
  result.error = tostring(err)
end
local file = assert(io.open(env.AGENT_LS_E2E_RESULT, "w"))
file:write(vim.fn.json_encode(result))
file:close()
vim.cmd("qa!")
