;;; review_findings_e2e.el --- review findings as flymake diagnostics in Emacs + eglot (batch)  -*- lexical-binding: t -*-

;; Driven by tests/e2e/editors/test_review_findings_editors.py:
;;
;;   timeout 60 emacs --batch -l tests/e2e/editors/review_findings_e2e.el
;;
;; Inputs: the AGENT_LS_E2E_* variables of agent_ls_e2e.el (PYTHON, FILE, BASE_URL, RESULT) and
;; AGENT_LS_E2E_FINDINGS (how many diagnostics to wait for).  The stock setup of docs/editors.md; runs
;; /code-review on the file (agent.runSkill), waits for the run's end and the findings in flymake, then
;; asks for the code actions on the first finding's line with the diagnostics eglot holds there, as
;; `eglot-code-actions' does.

;;; Code:

(require 'cl-lib)
(require 'json)
(require 'eglot)
(require 'flymake)

(defvar review-e2e--run-ended nil "The agent/runEnded params.")

(defun review-e2e--env (name)
  (or (getenv name) (error "environment variable %s is not set" name)))

(defun review-e2e--wait (what seconds predicate)
  "Process server output until PREDICATE holds; signal an error after SECONDS."
  (let ((deadline (+ (float-time) seconds)))
    (while (not (funcall predicate))
      (when (> (float-time) deadline)
        (error "timed out after %s s waiting for %s" seconds what))
      (accept-process-output nil 0.02))))

(cl-defmethod eglot-handle-notification
  (_server (_method (eql agent/runEnded)) &rest params)
  (setq review-e2e--run-ended params))

(cl-defmethod eglot-handle-notification (_server (_method (eql agent/event)) &rest _params))

(defun review-e2e--diagnostics ()
  "The buffer's flymake diagnostics, by position.  flymake asks its backends from an idle timer, which
never fires in batch mode, so start a check as that timer would."
  (flymake-start)
  (sort (flymake-diagnostics (point-min) (point-max))
        (lambda (a b) (< (flymake-diagnostic-beg a) (flymake-diagnostic-beg b)))))

(defun review-e2e--main (result)
  (let ((file (review-e2e--env "AGENT_LS_E2E_FILE"))
        (wanted (string-to-number (review-e2e--env "AGENT_LS_E2E_FINDINGS"))))
    (add-to-list 'eglot-server-programs
                 `(python-mode . (,(review-e2e--env "AGENT_LS_E2E_PYTHON") "-m" "agent_ls" "serve"
                                  :initializationOptions
                                  (:agentLs (:model "openai/test-model"
                                             :baseUrl ,(review-e2e--env "AGENT_LS_E2E_BASE_URL"))))))
    (setq eglot-sync-connect 30)
    (find-file file)
    (apply #'eglot (eglot--guess-contact))
    (let* ((server (or (eglot-current-server) (error "eglot did not connect")))
           (started (eglot-execute-command
                     server 'agent.runSkill
                     (vector (list :skill "code-review" :uri (eglot--path-to-uri file)))))
           (session-id (plist-get started :sessionId))
           found)
      (setcar result (plist-put (car result) :started started))
      (review-e2e--wait "agent/runEnded" 30
                        (lambda () (equal (plist-get review-e2e--run-ended :sessionId) session-id)))
      (setcar result (plist-put (car result) :run_ended review-e2e--run-ended))
      (review-e2e--wait "the findings in flymake" 15
                        (lambda () (>= (length (setq found (review-e2e--diagnostics))) wanted)))
      (setcar result
              (plist-put (car result) :diagnostics
                         (vconcat
                          (mapcar (lambda (d)
                                    (list :line (line-number-at-pos (flymake-diagnostic-beg d))
                                          :end_line (line-number-at-pos (flymake-diagnostic-end d))
                                          :type (symbol-name (flymake-diagnostic-type d))
                                          :text (flymake-diagnostic-text d)))
                                  found))))
      (let* ((first (car found))
             (line (1- (line-number-at-pos (flymake-diagnostic-beg first))))
             (lsp-diagnostics
              (vconcat (cl-loop for d in found
                                when (= (1- (line-number-at-pos (flymake-diagnostic-beg d))) line)
                                collect (alist-get 'eglot-lsp-diag (flymake-diagnostic-data d)))))
             (actions (jsonrpc-request
                       server :textDocument/codeAction
                       (list :textDocument (list :uri (eglot--path-to-uri file))
                             :range (list :start (list :line line :character 0)
                                          :end (list :line line :character 0))
                             :context (list :diagnostics lsp-diagnostics)))))
        (setcar result
                (plist-put (car result) :actions
                           (vconcat
                            (mapcar (lambda (a)
                                      (let ((command (plist-get a :command)))
                                        (list :title (plist-get a :title)
                                              :kind (plist-get a :kind)
                                              :command (plist-get command :command)
                                              :arguments (plist-get command :arguments))))
                                    actions)))))
      (eglot-shutdown server nil nil t))))

(let ((result (list (list :editor (format "emacs %s" emacs-version) :error nil))))
  (condition-case err
      (review-e2e--main result)
    (error (setcar result (plist-put (car result) :error (format "%S" err)))))
  (with-temp-file (expand-file-name "~/eglot-events.log")
    (dolist (buffer (buffer-list))
      (when (string-match-p "EGLOT" (buffer-name buffer))
        (insert "=== " (buffer-name buffer) " ===\n"
                (with-current-buffer buffer (buffer-substring-no-properties (point-min) (point-max)))
                "\n"))))
  (with-temp-file (review-e2e--env "AGENT_LS_E2E_RESULT")
    (insert (let ((json-encoding-pretty-print nil)) (json-encode (car result)))))
  (kill-emacs 0))

;;; review_findings_e2e.el ends here
