;;; agent_ls_e2e.el --- agent-ls end to end in a real Emacs with eglot (batch)  -*- lexical-binding: t -*-

;; Driven by tests/e2e/editors/test_emacs.py:
;;
;;   timeout 60 emacs --batch -l tests/e2e/editors/agent_ls_e2e.el
;;
;; (not -Q: Debian's site-start puts elpa-eglot on the load path).  Inputs come from the same
;; AGENT_LS_E2E_* environment variables as agent_ls_e2e.lua; the JSON result goes to
;; AGENT_LS_E2E_RESULT.
;;
;; AGENT_LS_E2E_EMACS_SETUP picks the user configuration, each as docs/editors.md gives it:
;;   stock     `eglot-server-programs' with :initializationOptions, plus the same settings in
;;             `eglot-workspace-configuration' (eglot sends it as didChangeConfiguration on connect);
;;   prompts   stock plus the `agent-ls-eglot' class, which declares window.showMessage and
;;             window.workDoneProgress (eglot handles both but does not declare them) and lets the
;;             server's "Apply N file(s)?" question replace eglot's own confirmation;
;;   init-options-only  :initializationOptions alone.
;; The server is started with `eglot' on the guessed contact, as M-x eglot does.
;;
;; Emacs cannot show prompts in batch mode, so the two functions eglot asks through are advised:
;; `completing-read' (window/showMessageRequest) and `y-or-n-p' (eglot's own confirmation before a
;; server-initiated edit, `eglot-confirm-server-initiated-edits').  Both record the question and
;; answer from the environment.

;;; Code:

(require 'cl-lib)
(require 'json)
(require 'eglot)

(defvar agent-ls-e2e--progress nil "Plists (:token :kind :title :message) of every $/progress.")
(defvar agent-ls-e2e--questions nil "Plists (:via :message :actions :answer) of every prompt.")
(defvar agent-ls-e2e--log nil "window/logMessage lines.")
(defvar agent-ls-e2e--edits nil "The workspace/applyEdit edits the server sent.")
(defvar agent-ls-e2e--run-ended nil "The agent/runEnded params.")

(defun agent-ls-e2e--env (name)
  (or (getenv name) (error "environment variable %s is not set" name)))

(defun agent-ls-e2e--wait (what seconds predicate)
  "Process server output until PREDICATE holds; signal an error after SECONDS."
  (let ((deadline (+ (float-time) seconds)))
    (while (not (funcall predicate))
      (when (> (float-time) deadline)
        (error "timed out after %s s waiting for %s" seconds what))
      (accept-process-output nil 0.02))))

;;; Recording what the server sends.

(cl-defmethod eglot-handle-notification
  (_server (_method (eql $/progress)) &key token value &allow-other-keys)
  "Record $/progress (eglot 1.9 itself ignores it)."
  (push (list :token token
              :kind (plist-get value :kind)
              :title (plist-get value :title)
              :message (plist-get value :message))
        agent-ls-e2e--progress))

(cl-defmethod eglot-handle-notification
  (_server (_method (eql window/logMessage)) &key _type message &allow-other-keys)
  "Record the transcript lines."
  (push message agent-ls-e2e--log))

(cl-defmethod eglot-handle-notification
  (_server (_method (eql agent/runEnded)) &rest params)
  "The run ended: its summary, as a plist."
  (setq agent-ls-e2e--run-ended params))

(cl-defmethod eglot-handle-notification
  (_server (_method (eql agent/event)) &rest _params)
  "Structured run events; the log lines carry the same information here.")

(cl-defmethod eglot-handle-request :before
  (_server (_method (eql workspace/applyEdit)) &key edit &allow-other-keys)
  "Record the edit; eglot's own method then applies it (after its confirmation)."
  (push edit agent-ls-e2e--edits))

;;; Answering prompts (there is no user in batch mode).

(defun agent-ls-e2e--answer-for (message)
  (if (string-match-p "\\`\\(\\[eglot\\] Server reports (type=[0-9]+): \\)?Apply " message)
      (agent-ls-e2e--env "AGENT_LS_E2E_APPLY")
    (agent-ls-e2e--env "AGENT_LS_E2E_PERMISSION")))

(advice-add 'completing-read :override
            (lambda (prompt collection &rest _)
              (let ((answer (agent-ls-e2e--answer-for prompt)))
                (push (list :via "completing-read" :message prompt
                            :actions (vconcat (all-completions "" collection)) :answer answer)
                      agent-ls-e2e--questions)
                answer))
            '((name . agent-ls-e2e)))

(advice-add 'y-or-n-p :override
            (lambda (prompt)
              ;; eglot's confirmation before applying a server edit ("Server wants to edit").
              (let ((yes (equal (agent-ls-e2e--env "AGENT_LS_E2E_APPLY") "Apply")))
                (push (list :via "y-or-n-p" :message prompt :actions ["y" "n"] :answer (if yes "y" "n"))
                      agent-ls-e2e--questions)
                yes))
            '((name . agent-ls-e2e)))

;;; The "prompts" setup (docs/editors.md): an eglot class for agent-ls.

(defclass agent-ls-eglot (eglot-lsp-server) ()
  :documentation "eglot for agent-ls: permission questions and progress, one question before applying.")

(cl-defmethod eglot-client-capabilities :around ((_server agent-ls-eglot))
  "Declare what eglot already handles: window/showMessageRequest and server-created progress."
  (let* ((capabilities (cl-call-next-method))
         (window (copy-sequence (plist-get capabilities :window))))
    (setq window (plist-put window :showMessage
                            '(:messageActionItem (:additionalPropertiesSupport :json-false))))
    (plist-put capabilities :window (plist-put window :workDoneProgress t))))

(cl-defmethod eglot-handle-request :around
  ((_server agent-ls-eglot) (_method (eql workspace/applyEdit)) &rest _)
  "agent-ls asks \"Apply N file(s)?\" itself before it sends the edit: do not ask twice."
  (let ((eglot-confirm-server-initiated-edits nil))
    (cl-call-next-method)))

;;; The flow.

(defun agent-ls-e2e--command (server command argument)
  "Run COMMAND with ARGUMENT; return (:result R) or (:error MESSAGE)."
  (condition-case err
      (list :result (eglot-execute-command server command (vector argument)))
    (error (list :error (error-message-string err)))))

(defun agent-ls-e2e--main (result)
  "Run the flow, filling the plist cell RESULT (a one-element list holding a plist)."
  (let ((file (agent-ls-e2e--env "AGENT_LS_E2E_FILE")))
    ;; The user's configuration, as in docs/editors.md.
    (let ((setup (agent-ls-e2e--env "AGENT_LS_E2E_EMACS_SETUP"))
          (python (agent-ls-e2e--env "AGENT_LS_E2E_PYTHON"))
          (settings `(:agentLs (:model "openai/test-model"
                                :baseUrl ,(agent-ls-e2e--env "AGENT_LS_E2E_BASE_URL")))))
      (add-to-list 'eglot-server-programs
                   `(python-mode . (,@(when (equal setup "prompts") '(agent-ls-eglot))
                                    ,python "-m" "agent_ls" "serve"
                                    :initializationOptions ,settings)))
      (unless (equal setup "init-options-only")
        (setq-default eglot-workspace-configuration settings)))
    (setq eglot-sync-connect 30)
    (find-file file)
    (apply #'eglot (eglot--guess-contact))
    (let ((server (eglot-current-server)))
      (unless server (error "eglot did not connect"))
      (setcar result (plist-put (car result) :capabilities (eglot-client-capabilities server)))
      ;; An unsaved change: a line typed at the top.  eglot sends didChange from an idle timer, which
      ;; never fires in batch mode, so send it now as that timer would.
      (goto-char (point-min))
      (insert (agent-ls-e2e--env "AGENT_LS_E2E_MARKER") "\n")
      (eglot--signal-textDocument/didChange)
      (let* ((started (eglot-execute-command
                       server 'agent.run
                       (vector (list :task (agent-ls-e2e--env "AGENT_LS_E2E_TASK")
                                     :uri (eglot--path-to-uri file)))))
             (session-id (plist-get started :sessionId)))
        (setcar result (plist-put (car result) :started started))
        (agent-ls-e2e--wait "agent/runEnded" 30
                            (lambda () (equal (plist-get agent-ls-e2e--run-ended :sessionId) session-id)))
        (let ((subset (getenv "AGENT_LS_E2E_SUBSET")))
          (if (and subset (not (string-empty-p subset)))
              ;; Only that file is applied; the files left are then discarded by URI (issue 16).
              (let (between)
                (setcar result (plist-put (car result) :apply
                                          (agent-ls-e2e--command
                                           server 'agent.applyProposal
                                           (list :sessionId session-id :files (vector subset)))))
                (setq between (agent-ls-e2e--command server 'agent.proposal (list :sessionId session-id)))
                (setcar result (plist-put (car result) :proposal_between between))
                (setcar result (plist-put (car result) :discard
                                          (agent-ls-e2e--command
                                           server 'agent.discardProposal
                                           (list :sessionId session-id
                                                 :files (vconcat
                                                         (mapcar (lambda (f) (plist-get f :uri))
                                                                 (plist-get (plist-get between :result)
                                                                            :files))))))))
            (setcar result (plist-put (car result) :apply
                                      (agent-ls-e2e--command server 'agent.applyProposal
                                                             (list :sessionId session-id))))))
        (setcar result (plist-put (car result) :proposal_after
                                  (agent-ls-e2e--command server 'agent.proposal
                                                         (list :sessionId session-id))))
        (setcar result (plist-put (car result) :buffer
                                  (buffer-substring-no-properties (point-min) (point-max))))
        (setcar result (plist-put (car result) :modified (if (buffer-modified-p) t :json-false)))
        ;; Keep the events and stderr buffers for `agent-ls-e2e--save-logs'.
        (eglot-shutdown server nil nil t)))))

(defun agent-ls-e2e--save-logs ()
  "Keep eglot's buffers (JSON-RPC events, server stderr) in ~/eglot-events.log for failure reports."
  (with-temp-file (expand-file-name "~/eglot-events.log")
    (dolist (buffer (buffer-list))
      (when (string-match-p "EGLOT" (buffer-name buffer))
        (insert "=== " (buffer-name buffer) " ===\n"
                (with-current-buffer buffer (buffer-substring-no-properties (point-min) (point-max)))
                "\n")))))

(let ((result (list (list :editor (format "emacs %s + %s" emacs-version
                                          (file-name-nondirectory
                                           (directory-file-name
                                            (file-name-directory (locate-library "eglot")))))
                          :error nil))))
  (condition-case err
      (agent-ls-e2e--main result)
    (error (setcar result (plist-put (car result) :error (format "%S" err)))))
  (agent-ls-e2e--save-logs)
  (let ((plist (car result)))
    (setq plist (plist-put plist :progress (vconcat (reverse agent-ls-e2e--progress))))
    (setq plist (plist-put plist :questions (vconcat (reverse agent-ls-e2e--questions))))
    (setq plist (plist-put plist :log (vconcat (reverse agent-ls-e2e--log))))
    (setq plist (plist-put plist :apply_edits (vconcat (reverse agent-ls-e2e--edits))))
    (setq plist (plist-put plist :run_ended agent-ls-e2e--run-ended))
    (with-temp-file (agent-ls-e2e--env "AGENT_LS_E2E_RESULT")
      (insert (let ((json-encoding-pretty-print nil)) (json-encode plist)))))
  (kill-emacs 0))

;;; agent_ls_e2e.el ends here
