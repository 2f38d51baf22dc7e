{#-
    THE catalog of secrets relore redacts: the one place its rules, and the examples every test
    checks them against, are written. relore_redact (macros/relore_functions.sql) is generated
    from it; data-tests/assert_redaction_catalog.sql runs every example through relore_redact;
    marts.relore_secret_catalog() serves it to tests/ and benchmarks/redaction_bench.py.

    Reference: gitleaks' default rule set, config/gitleaks.toml of github.com/gitleaks/gitleaks
    (v8, the generated file at commit 009e025ad4106ab333aa0b9dc4f2a884390d134c; groq-api-key,
    langsmith-api-key and aws-secret-access-key from cmd/generate/config/rules/ of the same tree).
    `refs` names the gitleaks rule ids an entry covers; an entry with none is a format gitleaks
    lacks (Replicate, Figma, OpenRouter, Azure storage keys ...) or a generic rule.
    Where gitleaks gates a rule on entropy, relore asks for a shape instead (digits and letters,
    a length), so a rule stays one regular expression.

    An entry: kind (the label: [REDACTED:<kind>]), pattern (a PostgreSQL ARE), flags (default
    g), replace (default [REDACTED:<kind>]; \1.. keep a name or a scheme), keywords (lower-case
    strings one of which any match contains: the rule runs only on text holding one) or guard (a
    regular expression doing the same), examples ([input, redacted] pairs), negatives (inputs
    left as they are). In examples \n is a line break, \\n a backslash and n, and \u{200B} the
  code point U+200B. %name%
    in a pattern is replaced by parts.name. Order matters: blocks first, providers, then the
    generic rules, which leave an earlier [REDACTED:...] alone.
-#}

{% macro relore_secret_catalog_source() -%}{% raw %}
parts:
  # a name that ends in one of these words holds a secret, whatever its value looks like
  strong: '(?:passw(?:or)?d|passphrase|pwd|secret|(?:secret|api|access|account|private|master|encryption|signing|client)[_-]?key|private[_-]?key[_-]?id|apikey|client[_-]?secret|(?:auth|access|refresh|api|bearer|hf|hub|gh|github|gitlab|npm|pypi|bot|slack|discord|telegram|session|private|personal[_-]?access)[_-]?token)'
  # a name ending in one of these holds a secret only when its value looks like one
  weak: '(?:token|credentials?|auth)'
  # name ... value: =, :, :=, =>, but never == or ::; a name may close a subscript
  # (os.environ["WANDB_API_KEY"] = ...)
  sep: '["'']?\]?[[:space:]]*(?::=|=>|=(?!=)|:(?![:=]))[[:space:]]*'
  # what a value is not: a placeholder, a variable, a type, a path, a URL, an earlier redaction
  notvalue: '(?!\[?REDACTED|[$<{[%*/~.#]|https?:|x{3,}|X{3,}|(?:str|int|bytes|bool|None|Optional|string|null|true|false|True|False|undefined|nil|none|os|env|process|self|getenv|input|required|optional)(?:[^A-Za-z0-9_]|$)|[0-9.]+(?:[^A-Za-z0-9_]|$))'
  # an unquoted value: stops at space, quotes, brackets and separators
  bare: '[^][:space:]"''`,;()<>{}&|]'
  # where an unquoted value may end
  end: '(?=$|[][:space:]"''`,;&)}|]|\.$|\.[[:space:]])'
  # a value shaped like a key, whatever names it: 32+ hex digits (W&B, Kaggle, Twilio,
  # Together), or 20+ letters and digits with a digit and both cases (Cohere, Mistral ...);
  # never a dotted name, a path or a word, nor a Twilio account sid (AC and 32 hex: an id).
  # Case-sensitive: an entry using it has flags g.
  keylike: '(?!AC[0-9a-f]{32}[^A-Za-z0-9])(?:[0-9a-f]{32,}|[0-9A-F]{32,}|(?=[A-Za-z0-9_-]*[0-9])(?=[A-Za-z0-9_-]*[a-z])(?=[A-Za-z0-9_-]*[A-Z])[A-Za-z0-9_-]{20,})(?![A-Za-z0-9_+/=.-])'

entries:
# ---- private keys first: a block is one secret, whatever tokens it holds
- kind: private_key
  refs: [private-key]
  pattern: '-----BEGIN[A-Z0-9 _-]{0,40}?PRIVATE KEY(?: BLOCK)?-----.*?-----END[A-Z0-9 _-]{0,40}?PRIVATE KEY(?: BLOCK)?-----'
  keywords: [private]
  examples:
  - ['a\n-----BEGIN RSA PRIVATE KEY-----\nQFWninKuQL24T2nWi4QyEy7E5A4Vmlgjqh1IP3XOmLpUlk7FJC+1OKAcy/Rc0xU/\nmaJVEQVqamYaNXCQpbqgy2/oXtsfEJ9FTMsI7HRH==\n-----END RSA PRIVATE KEY-----\nb', 'a\n[REDACTED:private_key]\nb']
  - ['-----BEGIN OPENSSH PRIVATE KEY-----\nm+2vgCVDSVpN+blATFP+ylIkWp3nJo/Bl9P+Mh6Z9lYj681IBIbhMpv/GA8oOp1u\n-----END OPENSSH PRIVATE KEY-----', '[REDACTED:private_key]']
  - ['-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n/GIyIZyPdekT4WDtL4WXeV4Nw5LX+6UfvV08/syJstfOBWJyGJRXB9m/lOdogSrz\n-----END PGP PRIVATE KEY BLOCK-----', '[REDACTED:private_key]']
  - ['"private_key": "-----BEGIN PRIVATE KEY-----\\noYwykoTtkwiPIf+bAXMTqswyGllWHvJtWq+2aZEkJXUvpqd4XY+tYMLgcSChfAVE\\n-----END PRIVATE KEY-----\\n"', '"private_key": "[REDACTED:private_key]\\n"']
  negatives: ['-----BEGIN PUBLIC KEY-----\nea/52b43CIRMxBSg8deMCqbVVStbqly1pTsfU5LBB7igB2ZTZhc/FcMC6SfTFQci\n-----END PUBLIC KEY-----']
- kind: private_key
  refs: [private-key]
  note: a block an excerpt cut before its END line
  pattern: '-----BEGIN[A-Z0-9 _-]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[[:space:]]*(?:(?:Proc-Type|DEK-Info|Comment|Version): [^\n]*|[A-Za-z0-9+/=\\]{16,}))*'
  keywords: [private]
  examples:
  - ['-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nqPGHlFL41QRCCYckV//Va4+XfGP1gRKHBL4ldsfRH+DCv/5RVECMSfyH954tbhuY\nIeEVkttINvh/KZSNPdRdu1sE4juHAEXbTPUBynEDMW1LEBQRCN3XhhrSxbiaJeUT', '[REDACTED:private_key]']
  - ['-----BEGIN ENCRYPTED PRIVATE KEY-----\n7rrrRI3uy6dF1KM+n9/N8eeUBllIYcKPt1KMARwBpVwfTk4Z5DEbvp3OTSj0IGPg\n\nthen it failed', '[REDACTED:private_key]\n\nthen it failed']
- kind: private_key
  refs: []
  note: PuTTY .ppk files
  pattern: '(Private-Lines: [0-9]+[[:space:]]+)[A-Za-z0-9+/=]+(?:\n[A-Za-z0-9+/=]+(?=\n|$))*'
  replace: '\1[REDACTED:private_key]'
  keywords: [private]
  examples:
  - ['Private-Lines: 2\nrI/Ea5W2zrO+UNqDAc2qj6hU17DqDRVa8TN9TBbfKDtdTjKhnVOm4Hz2BiX0CTlm\ne4fHFHqbtTDggAFLjxNq\nPrivate-MAC: b96821c3f3e890d1c190aead0f8cda44b753cdcc', 'Private-Lines: 2\n[REDACTED:private_key]\nPrivate-MAC: b96821c3f3e890d1c190aead0f8cda44b753cdcc']
# ---- providers, by prefix or shape
- kind: github_token
  refs: [github-pat, github-oauth, github-app-token, github-refresh-token]
  pattern: '\mgh[pousr]_[A-Za-z0-9]{30,}'
  keywords: [ghp_, gho_, ghu_, ghs_, ghr_]
  examples:
  - ['t ghp_2E5c6xyecM7fv1ocbdAffjwC2oO5Agzg5Hnj x', 't [REDACTED:github_token] x']
  - ['https://x-access-token:ghs_4C5RdHI7ZvR29ScbjVeWg2AIddpYgIiWNOEL@github.com/o/r', 'https://x-access-token:[REDACTED:github_token]@github.com/o/r']
  - ['the token was **ghp_**2E5c6xyecM7fv1ocbdAffjwC2oO5Agzg5Hnj oops', 'the token was **[REDACTED:github_token] oops']
  negatives: ['the ghp_ prefix', 'ghp_short123']
- kind: github_token
  refs: [github-fine-grained-pat]
  pattern: '\mgithub_pat_[A-Za-z0-9_]{22,}'
  keywords: [github_pat_]
  examples:
  - ['GH_TOKEN=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', 'GH_TOKEN=[REDACTED:github_token]']
- kind: gitlab_token
  refs: [gitlab-pat, gitlab-pat-routable, gitlab-deploy-token, gitlab-feed-token, gitlab-runner-authentication-token, gitlab-runner-authentication-token-routable, gitlab-scim-token, gitlab-cicd-job-token, gitlab-feature-flag-client-token, gitlab-incoming-mail-token, gitlab-kubernetes-agent-token, gitlab-oauth-app-secret, gitlab-ptt]
  pattern: '\mgl(?:pat|dt|ft|rt|soat|cbt|ffct|imt|agent|oas|ptt)-[A-Za-z0-9_.-]{20,}'
  keywords: [glpat-, gldt-, glft-, glrt-, glsoat-, glcbt-, glffct-, glimt-, glagent-, gloas-, glptt-]
  examples:
  - ['PRIVATE-TOKEN glpat-mfGkqw02LHPsGSudEG4v', 'PRIVATE-TOKEN [REDACTED:gitlab_token]']
  - ['deploy gldt-2eW1gvsT9Q9EnxW00ECB', 'deploy [REDACTED:gitlab_token]']
  negatives: ['glpat- tokens expire']
- kind: gitlab_token
  refs: [gitlab-rrt]
  pattern: '\mGR1348941[A-Za-z0-9_-]{20,}'
  keywords: [gr1348941]
  examples:
  - ['--registration-token GR1348941ccj3WcVGRaHfYQvMG50b', '--registration-token [REDACTED:gitlab_token]']
- kind: gitlab_token
  refs: [gitlab-session-cookie]
  pattern: '(_gitlab_session=)[0-9a-z]{32}'
  replace: '\1[REDACTED:gitlab_token]'
  keywords: [_gitlab_session=]
  examples:
  - ['Cookie: _gitlab_session=9ba8c19a34adb90a57fabe4440872d5a', 'Cookie: _gitlab_session=[REDACTED:gitlab_token]']
- kind: aws_access_key
  refs: [aws-access-token]
  pattern: '\m(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16}\M'
  keywords: [a3t, akia, asia, abia, acca, agpa, aida, aroa, aipa, anpa, anva]
  examples:
  - ['id AKIAIOSFODNN7EXAMPLE.', 'id [REDACTED:aws_access_key].']
  - ['x ASIACMS2XW7CENISSXFA', 'x [REDACTED:aws_access_key]']
  negatives: ['the AKIA keys', 'AKIAshort']
- kind: aws_secret_key
  refs: [aws-secret-access-key]
  pattern: '\m([A-Za-z0-9_.-]*secret_?access_?key|aws_?secret_?key)(["'']?\]?[[:space:]]*(?:=|:|=>)[[:space:]]*["'']?)[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])'
  flags: gi
  replace: '\1\2[REDACTED:aws_secret_key]'
  keywords: [secret]
  examples:
  - ['aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'aws_secret_access_key = [REDACTED:aws_secret_key]']
  - ['"SecretAccessKey": "8JzuPShrNCZkBIO6hhfNFiw7jc6IEgfWO5wEtqk6"', '"SecretAccessKey": "[REDACTED:aws_secret_key]"']
  - ['os.environ[''AWS_SECRET_ACCESS_KEY''] = ''tDvWVqJ0bT9kCzfQ2KxN7p5Lm1RhA8sYeG3uWnZc''', 'os.environ[''AWS_SECRET_ACCESS_KEY''] = ''[REDACTED:aws_secret_key]''']
- kind: google_api_key
  refs: [gcp-api-key]
  pattern: '\mAIza[0-9A-Za-z_-]{35}'
  keywords: [aiza]
  examples:
  - ['k=AIzaSyLc1vdN1JWfKy3UNg7odswQdZYaNrFwtCY', 'k=[REDACTED:google_api_key]']
- kind: google_oauth
  refs: []
  note: Google OAuth client secret and access token
  pattern: '\m(?:GOCSPX-[A-Za-z0-9_-]{28}|ya29\.[0-9A-Za-z_-]{30,})'
  keywords: [gocspx, ya29]
  examples:
  - ['client_secret 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', 'client_secret [REDACTED:google_oauth]']
  - ['token ya29.oTNhIkX3uhAtx0Oq7slyS62l7kGjX9UsXVo3mCEhzd29tvQ0HqlNZs7CBEla', 'token [REDACTED:google_oauth]']
- kind: azure_secret
  refs: [azure-ad-client-secret]
  pattern: '(?<![A-Za-z0-9_~.])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~-])'
  keywords: [q~]
  examples:
  - ['secret: abc8Q~y8mgdxuPKPl0oO07offVHfendsgkLLpFUI', 'secret: [REDACTED:azure_secret]']
- kind: azure_secret
  refs: []
  note: Azure storage account key in a connection string (detect-secrets AzureStorageKeyDetector)
  pattern: '(AccountKey=)[A-Za-z0-9+/]{40,}={0,2}'
  flags: gi
  replace: '\1[REDACTED:azure_secret]'
  keywords: [key]
  examples:
  - ['DefaultEndpointsProtocol=https;AccountName=x;AccountKey=qe8Kh6+Lf+Mf4RVcKDi9H2Wu3ZvzGN932uo3MUaluFBNLLZIgmgsiuWWY22ECkGvfjibnrmIrlmlQ4S8xf0o3B==;EndpointSuffix=core.windows.net', 'DefaultEndpointsProtocol=https;AccountName=x;AccountKey=[REDACTED:azure_secret];EndpointSuffix=core.windows.net']
- kind: azure_secret
  refs: []
  note: the signature of an Azure shared access signature URL
  pattern: '([?&]sig=)[A-Za-z0-9%+/]{30,}(?:%3D|=){0,2}'
  replace: '\1[REDACTED:azure_secret]'
  keywords: [sig=]
  examples:
  - ['https://a.blob.core.windows.net/c/f?sv=2022-11-02&sig=h5pvqnTVl7xiTIZaaBfkh6O0rJ3ZbgooHWeRl558SUr%3D', 'https://a.blob.core.windows.net/c/f?sv=2022-11-02&sig=[REDACTED:azure_secret]']
- kind: digitalocean_token
  refs: [digitalocean-pat, digitalocean-access-token, digitalocean-refresh-token]
  pattern: '\mdo[opr]_v1_[a-f0-9]{64}'
  keywords: [_v1_]
  examples:
  - ['DO=dop_v1_7419be54d3fb2f0e2dfe4ff2757ab177bd73e6921bd7cff49f2a3b1dfb585206', 'DO=[REDACTED:digitalocean_token]']
- kind: heroku_api_key
  refs: [heroku-api-key-v2]
  pattern: '\mHRKU-AA[0-9A-Za-z_-]{58}'
  keywords: [hrku-aa]
  examples:
  - ['HRKU-AA7cfNk3OmulIuvxddRiBB8poFStIL4NkvJPfZ6hNSIFFzzkvgmpSaZpTph7', '[REDACTED:heroku_api_key]']
- kind: heroku_api_key
  refs: [heroku-api-key]
  pattern: '(heroku[A-Za-z0-9_.-]*["'']?[[:space:]]*[:=][[:space:]]*["'']?)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
  flags: gi
  replace: '\1[REDACTED:heroku_api_key]'
  keywords: [heroku]
  examples:
  - ['HEROKU_API_KEY=5b289015-d696-07b5-d482-18c9f08cdec7', 'HEROKU_API_KEY=[REDACTED:heroku_api_key]']
  negatives: ['run_id = b6a79d33-f84d-03d9-9909-918f2024ff5a']
- kind: doppler_token
  refs: [doppler-api-token]
  pattern: '\mdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}'
  keywords: [dp.]
  examples:
  - ['DOPPLER_TOKEN dp.st.zRH2I9MUXgNpV1SwikoXdzHNwTJpQA0FGpMqlT5NaO2', 'DOPPLER_TOKEN [REDACTED:doppler_token]']
- kind: databricks_token
  refs: [databricks-api-token]
  pattern: '\mdapi[a-f0-9]{32}(?:-[0-9])?\M'
  keywords: [dapi]
  examples:
  - ['token dapi3decd090b3813a8e4e0401021e27752c', 'token [REDACTED:databricks_token]']
- kind: dropbox_token
  refs: [dropbox-short-lived-api-token]
  pattern: '\msl\.[A-Za-z0-9._=-]{130,}'
  keywords: [sl.]
  examples:
  - ['Bearer-less sl.mTMB7DRdDWn3lMXCI0sBJSnMCqxukhUFEM8S6tEhWOtVdaNNzlF6N0t0KkjAfHL7RoSQvKNQ87rAlJhPt7uJsz0aDaXBigCcKyNkRKncDpaGBUhNTO47F2fENIGOR4QSDTX3wQ2SqGoA', 'Bearer-less [REDACTED:dropbox_token]']
- kind: figma_token
  refs: []
  pattern: '\mfig[dou]_[A-Za-z0-9_-]{40,}'
  keywords: [figd_, figo_, figu_]
  examples:
  - ['X-Figma-Token: figd_oCkY0Sbfb1FTJRhh6NaNaxMB4xqqYQCjAz7UtI02', 'X-Figma-Token: [REDACTED:figma_token]']
- kind: grafana_token
  refs: [grafana-api-key]
  pattern: '\meyJrIjoi[A-Za-z0-9]{70,}={0,3}'
  keywords: [eyjrijoi]
  examples:
  - ['eyJrIjoib37UNBbCM5vHSXixsd6j7DQawgJ41VlC1PYnPsXa82qcJie6KbU15QePqRN0uFiJDwKQESUgOS9DhUu6', '[REDACTED:grafana_token]']
- kind: grafana_token
  refs: [grafana-cloud-api-token]
  pattern: '\mglc_[A-Za-z0-9+/]{32,}={0,3}'
  keywords: [glc_]
  examples:
  - ['glc_P9LXHiox3VpteD5dSMmRZ4kw5iMekIbNVhYFuGkHjIeblZg4p1tuCS2hgLOu=', '[REDACTED:grafana_token]']
- kind: grafana_token
  refs: [grafana-service-account-token]
  pattern: '\mglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}'
  keywords: [glsa_]
  examples:
  - ['glsa_QeaeC9U3yLrSxTs1dO1Bl2nfOcwgPwJm_7bb2721f', '[REDACTED:grafana_token]']
- kind: linear_token
  refs: [linear-api-key]
  pattern: '\mlin_(?:api|oauth)_[A-Za-z0-9]{40,}'
  keywords: [lin_]
  examples:
  - ['lin_api_ZqdeU4xeGlNYt56z4KnDtOPCQyYssGu9FBg6ivtJ', '[REDACTED:linear_token]']
- kind: notion_token
  refs: [notion-api-token]
  pattern: '\m(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43}\M)'
  keywords: [ntn_, secret]
  examples:
  - ['NOTION 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', 'NOTION [REDACTED:notion_token]']
  - ['secret_huUtGNcOOMrh9szcwAAk6C9GIPigQYgmaLzvd7FbWWh', '[REDACTED:notion_token]']
  negatives: ['secret_key_base']
- kind: okta_token
  refs: [okta-access-token]
  pattern: '((?:okta[A-Za-z0-9_.-]*["'']?[[:space:]]*[:=]|SSWS)[[:space:]]*["'']?)00[A-Za-z0-9_=-]{40}'
  flags: gi
  replace: '\1[REDACTED:okta_token]'
  keywords: [okta, ssws]
  examples:
  - ['Authorization-ish SSWS 00KwtXnXNxppHYEgUa2LYVezrTadCbd01a5966AQZ0', 'Authorization-ish SSWS [REDACTED:okta_token]']
  - ['okta_api_token: 00DwJAtENosFbv0QsqqVaPbkn2cFcNOQT377oa0iXs', 'okta_api_token: [REDACTED:okta_token]']
- kind: planetscale_token
  refs: [planetscale-api-token, planetscale-oauth-token, planetscale-password]
  pattern: '\mpscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,64}'
  keywords: [pscale_]
  examples:
  - ['pscale_pw_bRT0zfWv3gIgTtDZBZ0WdJrQitz57zdxPEhXRudVfZV', '[REDACTED:planetscale_token]']
- kind: pulumi_token
  refs: [pulumi-api-token]
  pattern: '\mpul-[a-f0-9]{40}\M'
  keywords: [pul-]
  examples:
  - ['PULUMI_ACCESS_TOKEN is pul-652f2b242918987461524f88d3a5563367592055', 'PULUMI_ACCESS_TOKEN is [REDACTED:pulumi_token]']
- kind: postman_token
  refs: [postman-api-token]
  pattern: '\mPMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}'
  keywords: [pmak-]
  examples:
  - ['PMAK-829ed0cdc29be0f51500c21a-9018b278665f8274c781c1161812e489b9', '[REDACTED:postman_token]']
- kind: replicate_token
  refs: []
  pattern: '\mr8_[A-Za-z0-9]{30,}'
  keywords: [r8_]
  examples:
  - ['REPLICATE_API_TOKEN=r8_ihWZVly9bVPi4YN9ULSB9ICYPFVxn3aXbRc6v', 'REPLICATE_API_TOKEN=[REDACTED:replicate_token]']
- kind: groq_api_key
  refs: [groq-api-key]
  pattern: '\mgsk_[A-Za-z0-9]{40,}'
  keywords: [gsk_]
  examples:
  - ['Groq(api_key="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")', 'Groq(api_key="[REDACTED:groq_api_key]")']
- kind: ai_api_key
  refs: []
  note: Kaggle API tokens (KGAT_), Together (tgp_v1_), Fireworks (fw_), ElevenLabs (sk_ and 48 hex), LangSmith's old ls__ keys
  pattern: '\m(?:KGAT_[A-Za-z0-9_-]{20,}|tgp_v1_[A-Za-z0-9_-]{30,}|fw_(?=[A-Za-z0-9]*[0-9])(?=[A-Za-z0-9]*[a-z])(?=[A-Za-z0-9]*[A-Z])[A-Za-z0-9]{20,}|sk_[a-f0-9]{48}\M|ls__[a-f0-9]{32}\M)'
  keywords: [kgat_, tgp_v1_, fw_, sk_, ls__]
  examples:
  - ['kaggle says 401 with KGAT_a4c123b1612dd272d1371c17149d4395', 'kaggle says 401 with [REDACTED:ai_api_key]']
  - ['Together rejects tgp_v1_nyVmihA-2O76UMFxFkM-R5Kjp1vRt_1fjORS-6ilI8i', 'Together rejects [REDACTED:ai_api_key]']
  - ['FIREWORKS fw_dUStPKR0CsTy4Qwb8DwkNhFd', 'FIREWORKS [REDACTED:ai_api_key]']
  - ['xi-api-key sk_6947ccf25ec84d8dbc74254770f58904dba41ecccc3fc162', 'xi-api-key [REDACTED:ai_api_key]']
  - ['ls__6e53a13043b026c48bbf33feff9243a8', '[REDACTED:ai_api_key]']
  negatives: ['fw_checkpoint_every_step', 'fw_version', 'KGAT_ tokens replace kaggle.json']
- kind: ai_api_key
  refs: []
  note: a Neptune API token (base64 of {"api_address":...})
  pattern: '\meyJhcGlfYWRkcmVzcyI6[A-Za-z0-9+/]{20,}={0,2}'
  keywords: [eyjhcglfywrkcmvzcyi6]
  examples:
  - ['NEPTUNE_API_TOKEN="eyJhcGlfYWRkcmVzcyI6Imh0dHBzOi8vYXBwLm5lcHR1bmUuYWkiLCJhcGlfdXJsIjoiaHR0cHM6Ly9hcHAubmVwdHVuZS5haSIsImFwaV9rZXkiOiIyOTU0MGE2ZS1iMTJhLWExZjYtZDQyZi1kZGJiN2E4NmY3YTIifQ=="', 'NEPTUNE_API_TOKEN="[REDACTED:ai_api_key]"']
- kind: anthropic_api_key
  refs: [anthropic-api-key, anthropic-admin-api-key]
  pattern: '\msk-ant-(?:api|admin|oat|sid)[0-9]{2}-[A-Za-z0-9_-]{20,}'
  keywords: [sk-]
  examples:
  - ['key sk-ant-api03-H4OtrEu97DIOBDS7s9iY1BCxxp1EU380eeGtp7fc0pvbieZgBvvrEm5RdrutjHC5IHw8f6C2GIA4qd0etnzAek7pi6eA4AA ok', 'key [REDACTED:anthropic_api_key] ok']
- kind: openai_api_key
  refs: [openai-api-key]
  pattern: '\msk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}'
  keywords: [sk-]
  examples:
  - ['OPENAI_API_KEY=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', 'OPENAI_API_KEY=[REDACTED:openai_api_key]']
  # wrapped at 80 columns: the line breaks inside it are read away (its normal form)
  - ['my key:\nsk-proj-R-gcEPkuRvj9UkLujq4-PYXeH6foR8mjWZz4XaHCFwckmowdq_b7vL4YgXJvR9L-mSkS6Wa5\n6nT3BlbkFJDVu6nFNpF2h0S7dwn-PmF4FsAZAHDY5ys4m4AaT1HCzVUfvg6PKpkX8ghW2cSHbrr7_pNQ\n6Zod\nthanks', 'my key:\n[REDACTED:openai_api_key]\nthanks']
- kind: openai_api_key
  refs: [openai-api-key]
  note: classic sk- keys (and other services using the same shape)
  pattern: '\msk-[A-Za-z0-9]{32,}'
  keywords: [sk-]
  examples:
  - ['openai.api_key = "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"', 'openai.api_key = "[REDACTED:openai_api_key]"']
  negatives: ['sk-learn', 'task-viXavkaeZuQxWuJcFI7Df1MAiDsZsdGcuubjiH03']
- kind: openrouter_api_key
  refs: []
  pattern: '\msk-or-v1-[a-f0-9]{64}'
  keywords: [sk-]
  examples:
  - ['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', '[REDACTED:openrouter_api_key]']
- kind: hf_token
  refs: [huggingface-access-token]
  pattern: '\mhf_[A-Za-z0-9]{30,}'
  keywords: [hf_]
  examples:
  - ['huggingface-cli login --token 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', 'huggingface-cli login --token [REDACTED:hf_token]']
  - ['login(token="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")', 'login(token="[REDACTED:hf_token]")']
  # hidden from a plain scan, found in the text's normal form (macros/functions/redaction_forms.sql)
  - ['token: <b>hf_</b>qsYVKKcEoSuAZDUlHFIzXsYXGeqJZHAZKp', 'token: <b>[REDACTED:hf_token]']
  - ['token: `hf_`SpiZUhVaEQUraghssysiWwgGeQJPSPfFMN', 'token: `[REDACTED:hf_token]']
  - ['hf_dHeogIaXahWQYfdhsjDt\u{200B}QEMSXpdTcaqNTbqPapVm leaked', '[REDACTED:hf_token] leaked']
  - ['try ｈｆ＿ＬＪｆｊｗＧｓＪＷＭｃｎｖＣＴＯｗｙＷＢｅｄｈＨＸＫｘｅｃＴｍＢｏｆ please', 'try [REDACTED:hf_token] please']
  - ['escaped hf\_VrBQHzMLdeYkPXcOTaKjuWnsGyfIEpqxR', 'escaped [REDACTED:hf_token]']
  - ['referenced hf&#95;VrBQHzMLdeYkPXcOTaKjuWnsGyfIEpqxR', 'referenced [REDACTED:hf_token]']
  - ['HF_B64: aGZfSnZXaVZ2anNCcUtkVkhXWnJQeFpUTFdneGFHYWdVRnhVYg== decode it', 'HF_B64: [REDACTED:hf_token] decode it']
  negatives:
  - 'hf_hub_download(repo_id)'
  - 'hf_token = HfFolder.get_token()'
  - 'max_length**length_penalty and 2**32 and get_*_dataloader'
  - '<b>bold</b>Text and `code`Text'
  - 'see https://github.com/huggingface/transformers/blob/main/src/transformers/modeling_llama2\nLlama2Model is the class'
- kind: hf_token
  refs: [huggingface-organization-api-token]
  pattern: '\mapi_org_[A-Za-z0-9]{30,}'
  keywords: [api_org_]
  examples:
  - ['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', '[REDACTED:hf_token]']
- kind: stripe_key
  refs: [stripe-access-token]
  pattern: '\m(?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,}'
  keywords: [k_test_, k_live_, k_prod_]
  examples:
  - ['stripe.api_key = sk_live_W7XamS6SatXjOJX9KIpku4a8', 'stripe.api_key = [REDACTED:stripe_key]']
  - ['rk_live_Xt45TVZk1ihvGSYklNanm7mQ', '[REDACTED:stripe_key]']
  negatives: ['pk_live_hMTfPmrhxgPNIwPehC6HYTI3']
- kind: stripe_key
  refs: []
  note: Stripe webhook signing secret
  pattern: '\mwhsec_[A-Za-z0-9]{32,}'
  keywords: [whsec_]
  examples:
  - ['whsec_gXj0sQTGdM6paIz3RLgYAQHI0SjHzUGk', '[REDACTED:stripe_key]']
- kind: npm_token
  refs: [npm-access-token]
  pattern: '\mnpm_[A-Za-z0-9]{36}\M'
  keywords: [npm_]
  examples:
  - ['//registry.npmjs.org/:_authToken=npm_ihfG1b50aooiCFywRc1xKRmKugU25jM6FJ6g', '//registry.npmjs.org/:_authToken=[REDACTED:npm_token]']
  negatives: ['npm_config_cache']
- kind: pypi_token
  refs: [pypi-upload-token]
  pattern: '\mpypi-AgE[A-Za-z0-9_-]{50,}'
  keywords: [pypi-age]
  examples:
  - ['TWINE_PASSWORD=pypi-AgEIcHlwaS5vcmc8ERHTOOVQm7ClFt202pVWaeMO3M2K0iT0adQ8TQHUaNYNdB1gqB7Um38J0zzWtbPNOAxo8', 'TWINE_PASSWORD=[REDACTED:pypi_token]']
- kind: rubygems_token
  refs: [rubygems-api-token]
  pattern: '\mrubygems_[a-f0-9]{48}'
  keywords: [rubygems_]
  examples:
  - ['rubygems_1b81fbc7c43603761c45f200c6ab2d602be761e572ecb7e7', '[REDACTED:rubygems_token]']
- kind: slack_token
  refs: [slack-config-access-token]
  pattern: '\mxoxe\.xox[bp]-[0-9]-[A-Za-z0-9]{100,}'
  keywords: [xox]
  examples:
  - ['xoxe.xoxp-1-xvtARZSZ7WIa8hLGsCTJ0wr2o53hF1L01Ftq2Z5fvIRQLzBddCH3STdwIZamDhJI7EAzw5KZPDGHBDVIlC2aUl33tbJAhnvqZ4fSwv95pWkuM9zpdDRIbVB13KDnIRhpXZsOlHJsmAnfLt1Mq9nR5X2zZ1G3olThi7d', '[REDACTED:slack_token]']
- kind: slack_token
  refs: [slack-bot-token, slack-user-token, slack-legacy-bot-token, slack-legacy-token, slack-legacy-workspace-token, slack-config-refresh-token]
  pattern: '\mxox[abposrec]-[A-Za-z0-9-]{10,}'
  keywords: [xox]
  examples:
  - ['xoxb-587890677967-9034662828463-DFiT4gcNIVcL9DhaIpctvSoS', '[REDACTED:slack_token]']
  - ['xoxp-337697853473-664166332710-412434914822-b2795ceafcfe7167f4c871a52e1a1814', '[REDACTED:slack_token]']
- kind: slack_token
  refs: [slack-app-token]
  pattern: '\mxapp-[0-9]-[A-Za-z0-9]+-[0-9]+-[A-Za-z0-9]+'
  keywords: [xapp-]
  examples:
  - ['SLACK_APP_TOKEN=xapp-1-A3YQ1RKHE0A-5073913900948-d89d7047231ca0f930aac3d9a8c10b8da6230fb662826f099e76e089962a73e7', 'SLACK_APP_TOKEN=[REDACTED:slack_token]']
- kind: slack_webhook
  refs: [slack-webhook-url]
  pattern: '(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}'
  keywords: [hooks.slack.com]
  examples:
  - ['post to https://hooks.slack.com/services/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 now', 'post to [REDACTED:slack_webhook] now']
- kind: discord_token
  refs: []
  note: bot token (detect-secrets DiscordBotTokenDetector)
  pattern: '\m[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}'
  guard: '[MNO][A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.'
  examples:
  - ['bot.run("MTTvuRbzTR8olQGL7XSzuihbJf.GgTav1.k9lyt6KAuLLyJXifU29yWji7aeKV1vXwAjsH5w")', 'bot.run("[REDACTED:discord_token]")']
- kind: discord_token
  refs: []
  note: webhook URL
  pattern: '(?:https?://)?(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/[A-Za-z0-9_-]{60,}'
  keywords: [discord]
  examples:
  - ['https://discord.com/api/webhooks/430951469604333028/AzOzc7kLaxoOzJPAgYv2rQk602scF7b7oYf8yJ30G8cSsEGxrKCRtH6oBdnA6LdqC8zf', '[REDACTED:discord_token]']
- kind: telegram_token
  refs: [telegram-bot-api-token]
  pattern: '\m[0-9]{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])'
  keywords: [':aa']
  examples:
  - ['bot = Bot("9257620112:AAsNJNOgRP6TdV6nPMxSQpiVdtX21Z8o2lR")', 'bot = Bot("[REDACTED:telegram_token]")']
- kind: twilio_key
  refs: [twilio-api-key]
  pattern: '\mSK[0-9a-f]{32}\M'
  guard: 'SK[0-9a-f][0-9a-f]'
  examples:
  - ['TWILIO_API_KEY SK2d13b15b8092c5124bdb58b7953785c2', 'TWILIO_API_KEY [REDACTED:twilio_key]']
- kind: sendgrid_key
  refs: [sendgrid-api-token]
  note: SG. then two parts around a dot (22 and 43 today), or gitleaks' shape (66 of [a-z0-9=_.-])
  pattern: '\mSG\.(?:[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}|[A-Za-z0-9=_.-]{60,})'
  keywords: [sg.]
  examples:
  - ['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', '[REDACTED:sendgrid_key]']
  - ['SENDGRID_KEY: SG.e9sbw61bwo5x1pnigdnqmgslbt8xp2uaocb3i7gs_3x2xdglm9owewvdk_f4c0fm5', 'SENDGRID_KEY: [REDACTED:sendgrid_key]']
  negatives: ['SG.Module.forward', 'see SG.com']
- kind: mailgun_key
  refs: [mailgun-private-api-token]
  pattern: '\mkey-[0-9a-f]{32}\M'
  keywords: [key]
  examples:
  - ['auth=("api", "key-2ae1cbadc16c864ac8aebe8b0c853807")', 'auth=("api", "[REDACTED:mailgun_key]")']
- kind: mailchimp_key
  refs: [mailchimp-api-key]
  pattern: '\m[0-9a-f]{32}-us[0-9]{1,2}\M'
  guard: '[0-9a-f]-us[0-9]'
  examples:
  - ['01b5be51b71d60ad9f1938574de5cf73-us21', '[REDACTED:mailchimp_key]']
- kind: shopify_token
  refs: [shopify-access-token, shopify-custom-access-token, shopify-private-app-access-token, shopify-shared-secret]
  pattern: '\mshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}'
  keywords: [shp]
  examples:
  - ['X-Shopify-Access-Token: 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', 'X-Shopify-Access-Token: [REDACTED:shopify_token]']
- kind: square_token
  refs: [square-access-token]
  pattern: '\m(?:sq0(?:atp|csp)-[0-9A-Za-z_-]{22,60}|EAAA[A-Za-z0-9_-]{60}\M)'
  keywords: [sq0, eaa]
  examples:
  - ['sq0atp-GfkFhN0kDVYdPaKfb0SWkn', '[REDACTED:square_token]']
  - ['EAAAQnwo4OcwGbyFkaEF2F9hrFQed3NVTqByQjHFG5h6uEQ2Pp0WDvZTrDIDWaHm', '[REDACTED:square_token]']
- kind: facebook_token
  refs: [facebook-page-access-token]
  pattern: '\mEAA[MC][A-Za-z0-9]{100,}'
  keywords: [eaa]
  examples:
  - ['EAAC0jOIHu6Y1akpQGVqAfe9QHaSQdi2b5Gtd7rIPhHkq5kKKuUL1JnKr9Y9XbHeV1c5q8XSGhE9GHEUZzHVGMK7aLTqInaeqyfPioFQnCqAfTdh7D0Km11OTKrk', '[REDACTED:facebook_token]']
- kind: atlassian_token
  refs: [atlassian-api-token]
  pattern: '\mATATT3[A-Za-z0-9_=-]{180,}'
  keywords: [atatt3]
  examples:
  - ['ATATT3lAKyoWZHOuE5KIb5mCPVcFsWIvMoJRxR1ZRcjp0G7SvPkAqpSlfSDunlgIHEpbbT5pQWPhnzFV2zmBqS5AKZuFzarZsgMKsK8lB4xp8SCtkyHSBBFoeOTfFwZnZgvoqcwkVabTA9Pnp2bqF8YKzfgU3llr0Fw3fcwn5tDhWwFNEhY2rat8fuHZz5bR', '[REDACTED:atlassian_token]']
- kind: artifactory_token
  refs: [artifactory-api-key, artifactory-reference-token]
  pattern: '\m(?:AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})\M'
  keywords: [akcp, cmvmd]
  examples:
  - ['AKCpM1qBtV8IywvO2462luDSCQk9hbuEDHHhGJ6w0CGeXCQw5pSaWnJgdIyVs3AOseHs647os', '[REDACTED:artifactory_token]']
- kind: age_secret_key
  refs: [age-secret-key]
  pattern: 'AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}'
  keywords: [age-secret-key-1]
  examples:
  - ['AGE-SECRET-KEY-1S7GXVHA0RNHL9NYGEGDNV56J5XGXJT9RG7EHHTRAH0Q0PCMN0HSGAK8Q6P', '[REDACTED:age_secret_key]']
- kind: onepassword_secret
  refs: [1password-secret-key, 1password-service-account-token]
  pattern: '\m(?:A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\M|ops_eyJ[A-Za-z0-9+/]{250,}={0,3})'
  keywords: [a3-, ops_eyj]
  examples:
  - ['A3-FAQ3SS-8I1W6NYQEAS-MICOO-NGOWD-ZWGHX', '[REDACTED:onepassword_secret]']
- kind: cloud_key
  refs: [adobe-client-secret]
  pattern: '\mp8e-[A-Za-z0-9]{32}\M'
  keywords: [p8e-]
  examples:
  - ['p8e-9F8fKAvsK3zyNCZZU7TmLvjkxp5Flelk', '[REDACTED:cloud_key]']
- kind: cloud_key
  refs: [alibaba-access-key-id]
  pattern: '\mLTAI[A-Za-z0-9]{20}\M'
  keywords: [ltai]
  examples:
  - ['LTAI13ucQd698ZlYY5Evnt0S', '[REDACTED:cloud_key]']
- kind: cloud_key
  refs: [cloudflare-origin-ca-key]
  pattern: '\mv1\.0-[a-f0-9]{24}-[a-f0-9]{146}'
  keywords: [v1.0-]
  examples:
  - ['v1.0-242156b6b66e2baba3b1556b-199863dbab6647cd76c2b1a0b58d2f202f488e59363def89169f0d4bc7406a23972eedf38372461980b91f6cc0238f147824619f5ffbe68d19de6a79952aebb7cd44a86f7256a25e40', '[REDACTED:cloud_key]']
- kind: cloud_key
  refs: [hashicorp-tf-api-token]
  pattern: '\m[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}'
  keywords: [atlasv1]
  examples:
  - ['F1vHHfrz1rPmur.atlasv1.1ndLdv5bgoC8jTxnP7ggB4SEEhv8x4hIpTzSEKWFpE0TaxCzNWHlcSgsrCrwa8ldQey', '[REDACTED:cloud_key]']
- kind: cloud_key
  refs: [vault-service-token, vault-batch-token]
  pattern: '\mhv[sb]\.[A-Za-z0-9_-]{90,}'
  keywords: [hvs., hvb.]
  examples:
  - ['VAULT_TOKEN=hvs.hNSS23Mc8ZyKbhAGZ60Jxxx9md4Zz0n4r14v7f93qp0niVAxT7aMH6UMy2zpvFiPxlgVpYT40I87swkHJZORDuWaKem6Nu7', 'VAULT_TOKEN=[REDACTED:cloud_key]']
- kind: cloud_key
  refs: [dynatrace-api-token]
  pattern: '\mdt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}'
  keywords: [dt0c01.]
  examples:
  - ['dt0c01.4X5IAQUJ1XJHHDQ2E3PFY9TK.CToMzUpm5QUbkhfKLDJKq4FmbeGCcqov2VN7uOVjaIzRQg8B4LS93Gg91PQ1clD8', '[REDACTED:cloud_key]']
- kind: cloud_key
  refs: [flyio-access-token]
  pattern: '\m(?:fo1_[A-Za-z0-9_-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3})'
  keywords: [fo1_, fm1, fm2_]
  examples:
  - ['FLY_API_TOKEN=fm2_5acKtL6PTsAw9rbluNkzYqhyDLHshRq7rDBI7XaYZPJbfn2wfvlpIYQjFm5FAlbmVkCCI3iQeBKE5ueyyIHObpsSgWm3aGP6UIHXoyIL5qol0t7lEiICgUfc', 'FLY_API_TOKEN=[REDACTED:cloud_key]']
- kind: cloud_key
  refs: [openshift-user-token]
  pattern: '\msha256~[A-Za-z0-9_-]{43}'
  keywords: [sha256~]
  examples:
  - ['oc login --token=sha256~NdiktxDmEH9lMJdNXBhnCquypGouvSfa2qmeGFeeN63', 'oc login --token=[REDACTED:cloud_key]']
- kind: cloud_key
  refs: [scalingo-api-token]
  pattern: '\mtk-us-[A-Za-z0-9_-]{48}'
  keywords: [tk-us-]
  examples:
  - ['tk-us-x5U1ZztJ6Ij4zlBRqMXn1usGYYyNcUEnhrepMicKUf7MGUMy', '[REDACTED:cloud_key]']
- kind: cloud_key
  refs: [infracost-api-token]
  pattern: '\mico-[A-Za-z0-9]{32}\M'
  keywords: [ico-]
  examples:
  - ['ico-EzK9t189EnBneTnvVMldVEtJALQGn3Q7', '[REDACTED:cloud_key]']
- kind: cloud_key
  refs: [intra42-client-secret]
  pattern: '\ms-s4t2(?:ud|af)-[a-f0-9]{64}'
  keywords: [s-s4t2]
  examples:
  - ['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', '[REDACTED:cloud_key]']
- kind: cloud_key
  refs: [octopus-deploy-api-key]
  pattern: '\mAPI-[A-Z0-9]{26}\M'
  keywords: [api-]
  examples:
  - ['API-TCZIYJBRIRZ54BF4NE34KPYHDG', '[REDACTED:cloud_key]']
- kind: cloud_key
  refs: [harness-api-key]
  pattern: '\m(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}'
  keywords: [pat., sat.]
  examples:
  - ['pat.g9kj40kX8IEOdeJmEImXy3.CyjrKGB84Kjl6tT2c7k1YIzN.ux2KiU02NJPIQldb74Hi', '[REDACTED:cloud_key]']
- kind: cloud_key
  refs: []
  note: Supabase, Docker Hub, Buildkite personal tokens
  pattern: '\m(?:sbp_[a-f0-9]{40}|dckr_pat_[A-Za-z0-9_-]{27}|bkua_[a-f0-9]{40})'
  keywords: [sbp_, dckr_pat_, bkua_]
  examples:
  - ['docker login -u me --password-stdin <<< dckr_pat_yn6KhljEzWsLDBrDiuRzPcCi0JR', 'docker login -u me --password-stdin <<< [REDACTED:cloud_key]']
  - ['sbp_6c8559c5e7a0ef21a942f9a53baf1af2b8bc3520', '[REDACTED:cloud_key]']
- kind: saas_token
  refs: [clojars-api-token]
  pattern: '\mCLOJARS_[A-Za-z0-9]{60}'
  flags: gi
  keywords: [clojars_]
  examples:
  - ['CLOJARS_i3pec91k287abrwbm3o5qo6y0wbpz1qxxgio1vfgazuwnw2vomwh3yvz9jvm', '[REDACTED:saas_token]']
- kind: saas_token
  refs: [easypost-api-token, easypost-test-api-token]
  pattern: '\mEZ[AT]K[A-Za-z0-9]{54}\M'
  keywords: [ezak, eztk]
  examples:
  - ['EZAKNbgyse9JDHF8ddF3U6dHiTkuHixKWo6rRfolRGJKKKFZLLyPzmOsJI', '[REDACTED:saas_token]']
- kind: saas_token
  refs: [duffel-api-token]
  pattern: '\mduffel_(?:test|live)_[A-Za-z0-9_=-]{43}'
  keywords: [duffel_]
  examples:
  - ['duffel_live_Kmu0EHeui9dHyt7rVYxvylLDS9UKTKRlRE3C9JTcJpP', '[REDACTED:saas_token]']
- kind: saas_token
  refs: [flutterwave-secret-key, flutterwave-encryption-key, flutterwave-public-key]
  pattern: '\mFLW(?:SECK|PUBK)_TEST-[a-hA-H0-9]{12,32}(?:-X)?'
  keywords: [flw]
  examples:
  - ['FLWSECK_TEST-0e3bfe228ce08b24301840cb6fd835d6-X', '[REDACTED:saas_token]']
- kind: saas_token
  refs: [frameio-api-token]
  pattern: '\mfio-u-[A-Za-z0-9_=-]{64}'
  keywords: [fio-u-]
  examples:
  - ['fio-u-qkufxlqJMDEjN9UsGDnBmsvBAQ7onLYqi5bzkos3I4lJGtkkQh50buyBkpRVCsAn', '[REDACTED:saas_token]']
- kind: saas_token
  refs: [maxmind-license-key]
  pattern: '\m[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk\M'
  keywords: [_mmk]
  examples:
  - ['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', '[REDACTED:saas_token]']
- kind: saas_token
  refs: [new-relic-user-api-key, new-relic-insert-key, new-relic-browser-api-token]
  pattern: '\mNR(?:AK|II|JS)-[A-Za-z0-9-]{19,32}'
  keywords: [nrak-, nrii-, nrjs-]
  examples:
  - ['NEW_RELIC_API_KEY=NRAK-5AOG3UBDOTTFW41I5D4DWN0ZZEU', 'NEW_RELIC_API_KEY=[REDACTED:saas_token]']
- kind: saas_token
  refs: [perplexity-api-key]
  pattern: '\mpplx-[A-Za-z0-9]{48}'
  keywords: [pplx-]
  examples:
  - ['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', '[REDACTED:saas_token]']
- kind: saas_token
  refs: [prefect-api-token]
  pattern: '\mpnu_[A-Za-z0-9]{36}'
  keywords: [pnu_]
  examples:
  - ['pnu_arndy5JHOO3ZhcKKOWkdg402i8RNCDgGuNak', '[REDACTED:saas_token]']
- kind: saas_token
  refs: [readme-api-token]
  pattern: '\mrdme_[a-z0-9]{70}'
  keywords: [rdme_]
  examples:
  - ['rdme_2kirxktby9f1633c1rnkxdquqmk19q43rvbq530xfozu0wvvv4png2nvdwdsqp7udt6fmx', '[REDACTED:saas_token]']
- kind: saas_token
  refs: [sendinblue-api-token]
  pattern: '\mxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}'
  keywords: [xkeysib-]
  examples:
  - ['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', '[REDACTED:saas_token]']
- kind: saas_token
  refs: [sentry-user-token, sentry-org-token]
  pattern: '\m(?:sntryu_[a-f0-9]{64}|sntrys_eyJ[A-Za-z0-9+/=_]{60,})'
  keywords: [sntry]
  examples:
  - ['SENTRY_AUTH_TOKEN=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', 'SENTRY_AUTH_TOKEN=[REDACTED:saas_token]']
- kind: saas_token
  refs: [settlemint-application-access-token, settlemint-personal-access-token, settlemint-service-access-token]
  pattern: '\msm_(?:aat|pat|sat)_[A-Za-z0-9]{16}\M'
  keywords: [sm_]
  examples:
  - ['sm_pat_kHOBlaDuU3F32kk9', '[REDACTED:saas_token]']
- kind: saas_token
  refs: [shippo-api-token]
  pattern: '\mshippo_(?:live|test)_[a-fA-F0-9]{40}'
  keywords: [shippo_]
  examples:
  - ['shippo_live_43cb51dc26c6120c5260ccd16a8d33da6e0a737e', '[REDACTED:saas_token]']
- kind: saas_token
  refs: [sourcegraph-access-token]
  pattern: '\msgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}'
  keywords: [sgp_]
  examples:
  - ['sgp_9d7f30be6cd404b6_81a3000c812620c1147be0b361ad91a72e9f58ec', '[REDACTED:saas_token]']
- kind: saas_token
  refs: [typeform-api-token]
  pattern: '\mtfp_[A-Za-z0-9_.=-]{59}'
  keywords: [tfp_]
  examples:
  - ['tfp_LRBEnRkDsYweF9rZk8G7NM3wCYopxX89rwkaLXe822xyC0fdN2QJsK0uXEm', '[REDACTED:saas_token]']
- kind: saas_token
  refs: [twitter-bearer-token]
  note: a run of A alone (padding, a test string) is not a token, and the token ends there
  pattern: '\mA{22}(?!A{80})[A-Za-z0-9%]{80,100}(?![A-Za-z0-9%])'
  keywords: [aaaaaaaaaaaaaaaaaaaaaa]
  examples:
  - ['AAAAAAAAAAAAAAAAAAAAAAQ6v1qBEIcRV0Jy8xcY57fm1sdYnn5PKd7n4rIHYlD9GxYvMS795KtHsCoOVFpNQGgzNO0rF0dF1SVYyK73tn1eEgse', '[REDACTED:saas_token]']
  negatives: ['AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA']
- kind: saas_token
  refs: [microsoft-teams-webhook]
  pattern: 'https://[A-Za-z0-9-]+\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/-]{40,}'
  keywords: [webhook.office.com]
  examples:
  - ['https://acme.webhook.office.com/webhookb2/e23c46f9-cc44-7f43-d066-731e3ef92a3c@38b403ad-47f5-f793-68af-a5399d0d118f/IncomingWebhook/0e7f5013770c38d00051b5f7b224ebb2/b80cb6e8-8838-f4b7-c01f-06201b3b4bb3', '[REDACTED:saas_token]']
- kind: saas_token
  refs: [cohere-api-token]
  pattern: '((?:cohere|co_api_key)[A-Za-z0-9_.-]*["'']?[[:space:]]*[:=][[:space:]]*["'']?)[A-Za-z0-9]{40}\M'
  flags: gi
  replace: '\1[REDACTED:saas_token]'
  keywords: [cohere, key]
  examples:
  - ['CO_API_KEY=ODptsliMc3YJsiCfZuh9SMo84yoOzVmJf13aiifd', 'CO_API_KEY=[REDACTED:saas_token]']
- kind: saas_token
  refs: [airtable-api-key, mapbox-api-token, contentful-delivery-api-token]
  note: Airtable personal access tokens, Mapbox secret tokens, Contentful personal access tokens
  pattern: '\m(?:pat[A-Za-z0-9]{14}\.[a-f0-9]{64}|sk\.eyJ[A-Za-z0-9_-]{50,}\.[A-Za-z0-9_-]{20,}|CFPAT-[A-Za-z0-9_-]{43})'
  guard: 'pat[A-Za-z0-9]+\.[a-f0-9]|sk\.eyJ|CFPAT-'
  examples:
  - ['patjaYrkZ3sDCncYa.6b967f265743462de99b06c5602e2a14d610f0f4643ccf7af0e4c5070c721381', '[REDACTED:saas_token]']
  - ['sk.eyJhrIKEuABZIAncqiG5eP0zmQ71TonWxovlLcpZ6FSCGrg5m1V0qrH6PXw1tai.xHpxiIIW0YqwNWUeNPeIP0', '[REDACTED:saas_token]']
- kind: ai_api_key
  refs: [langsmith-api-key]
  pattern: '\mlsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}'
  keywords: [lsv2_]
  examples:
  - ['LANGCHAIN_API_KEY=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', 'LANGCHAIN_API_KEY=[REDACTED:ai_api_key]']
- kind: ai_api_key
  refs: []
  note: NVIDIA, Tavily, Pinecone, xAI keys
  pattern: '\m(?:nvapi-[A-Za-z0-9_-]{64}|tvly-(?:dev-)?[A-Za-z0-9]{32}|pcsk_[A-Za-z0-9_]{50,}|xai-[A-Za-z0-9]{80})'
  keywords: [nvapi-, tvly-, pcsk_, xai-]
  examples:
  - ['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', '[REDACTED:ai_api_key]']
  - ['TAVILY_API_KEY=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', 'TAVILY_API_KEY=[REDACTED:ai_api_key]']
- kind: ai_api_key
  refs: []
  note: Weights & Biases key on a wandb login line
  pattern: '(wandb[[:space:]]+login[[:space:]]+(?:--relogin[[:space:]]+)?)[a-f0-9]{40}\M'
  replace: '\1[REDACTED:ai_api_key]'
  keywords: [wandb]
  examples:
  - ['!wandb login c5b92551c63564b2b00c9ce5e725e6121d438d0d', '!wandb login [REDACTED:ai_api_key]']
- kind: jwt
  refs: [jwt]
  pattern: '\mey[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_=-]*'
  keywords: [.ey]
  examples:
  - ['eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N', '[REDACTED:jwt]']
  - ['id_token=eyJa95q5Acs0grCx9ZRR1k0Ak1htnz0IU.eyJyaKlAz5FPjlfG8vVXs4YE9BXgLop0P3zw6vOuCY4Zxb6lTf8WjH7LLxIoIia.19PBsaTrapFgLMIbIlmU0cBRQW8W1ouGTDrQ01Y85Ed end', 'id_token=[REDACTED:jwt] end']
# ---- generic rules: credentials in URLs, headers, command lines, assignments
- kind: url_password
  refs: []
  note: user:password@ in any URL (postgres, mysql, mongodb+srv, redis, amqp, https ...)
  pattern: '\m([a-z][a-z0-9+.-]*://[^][/[:space:]:@"''<>]*:)(?!(?:password|pass|passwd|pwd|secret|changeme|\*+|x+|\.+|<[^>]*>)@)%notvalue%([^][/[:space:]@"''<>]{2,})(@[A-Za-z0-9.-])'
  flags: gi
  replace: '\1[REDACTED:url_password]\3'
  guard: '://[^/[:space:]@]*:[^/[:space:]@]*@'
  examples:
  - ['DATABASE_URL=postgres://app:TucnnbhY0zcSp8y1@db.internal:5432/app', 'DATABASE_URL=postgres://app:[REDACTED:url_password]@db.internal:5432/app']
  - ['mongodb+srv://admin:TRSOeAxruz0U@cluster0.mongodb.net/test', 'mongodb+srv://admin:[REDACTED:url_password]@cluster0.mongodb.net/test']
  - ['redis://:R0l5pbQvorYELg2GjRj6@localhost:6379/0', 'redis://:[REDACTED:url_password]@localhost:6379/0']
  negatives: ['postgresql://user:password@localhost/db', 'https://github.com/o/r', 'ssh://git@github.com:22/o/r', 'mysql://user:${DB_PASS}@host/db']
- kind: auth_header
  refs: [curl-auth-header]
  pattern: '\m(authorization["'']?[[:space:]]*[:=][[:space:]]*["'']?(?:bearer|basic|token|bot|digest|apikey|api-key|sso-key)[[:space:]]+)%notvalue%[A-Za-z0-9._~+/=:-]{8,}'
  flags: gi
  replace: '\1[REDACTED:auth_header]'
  keywords: [auth]
  examples:
  - ['-H "Authorization: Bearer OeBZ7gSAFV6HYyhIqNX8yYEq"', '-H "Authorization: Bearer [REDACTED:auth_header]"']
  - ['Authorization: token abcdefgh1234', 'Authorization: token [REDACTED:auth_header]']
  - ['Authorization: Basic dXNlcjpwYXNzd29yZA==', 'Authorization: Basic [REDACTED:auth_header]']
  negatives: ['Authorization: Bearer $TOKEN', 'Authorization: Bearer <token>', '{"Authorization": f"Bearer {token}"}']
- kind: auth_header
  refs: [curl-auth-header]
  note: a header with no scheme, or a key header
  pattern: '\m((?:authorization|x-api-key|api-key|x-auth-token|private-token|x-access-token)["'']?[[:space:]]*[:=][[:space:]]*["'']?)%notvalue%(?=[A-Za-z0-9._~+/=-]*[0-9])(?=[A-Za-z0-9._~+/=-]*[A-Za-z])[A-Za-z0-9._~+/=-]{16,}'
  flags: gi
  replace: '\1[REDACTED:auth_header]'
  keywords: [auth, key, token]
  examples:
  - ['Authorization: 6IUFRwxCqprFuhbGa3qHAAvjofG6Rl', 'Authorization: [REDACTED:auth_header]']
  - ['curl -H "X-Api-Key: 78777129ec0271838f425b9fd1dfce47" x', 'curl -H "X-Api-Key: [REDACTED:auth_header]" x']
  negatives: ['Authorization: required for private models']
- kind: auth_header
  refs: []
  note: a bearer token anywhere, when it looks like one
  pattern: '\m([Bb]earer[[:space:]]+)(?=[A-Za-z0-9._~+/=-]*[0-9])(?=[A-Za-z0-9._~+/=-]*[A-Za-z])[A-Za-z0-9._~+/=-]{20,}'
  replace: '\1[REDACTED:auth_header]'
  keywords: [bearer]
  examples:
  - ['send it as bearer DI3m2ViMEJH2tQN225zJ4ZzLs9pEmuPYBJqshHEm please', 'send it as bearer [REDACTED:auth_header] please']
  negatives: ['Bearer authentication is required']
- kind: password_flag
  refs: [curl-auth-user]
  pattern: '\m(curl\M[^\n]*[[:space:]](?:-u|--user)[[:space:]=]*["'']?[^:[:space:]"'']+:)(?!(?:password|pass|token)(?:["''[:space:]]|$))%notvalue%[^[:space:]"'']{3,}'
  replace: '\1[REDACTED:password_flag]'
  keywords: [curl]
  examples:
  - ['curl -u admin:vAznqMlOJ6um https://x', 'curl -u admin:[REDACTED:password_flag] https://x']
  negatives: ['curl -u user:$PASS https://x']
- kind: password_flag
  refs: []
  note: mysql -pPASSWORD (the value is glued to -p; a bare -p prompts)
  pattern: '\m((?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump)\M[^\n]*[[:space:]]-p)%notvalue%("[^"\n]+"|''[^''\n]+''|[^[:space:]"''-][^[:space:]"'']*)'
  replace: '\1[REDACTED:password_flag]'
  keywords: [mysql, mariadb]
  examples:
  - ['mysql -uroot -peG4ZqOy77i -h db', 'mysql -uroot -p[REDACTED:password_flag] -h db']
  - ['mysqldump -u root -p''two words'' db', 'mysqldump -u root -p[REDACTED:password_flag] db']
  negatives: ['mysql -u root -p dbname', 'mysql -P 3306 -p']
- kind: password_flag
  refs: []
  note: sshpass -p, docker/podman/helm login -p
  pattern: '\m((?:sshpass|(?:docker|podman|helm[[:space:]]+registry)[[:space:]]+login)\M[^\n]*[[:space:]]-p[[:space:]]+)%notvalue%("[^"\n]+"|''[^''\n]+''|[^[:space:]"''-][^[:space:]"'']*)'
  replace: '\1[REDACTED:password_flag]'
  keywords: [sshpass, login]
  examples:
  - ['docker login -u me -p T8JOSfv4mxYOjh4V ghcr.io', 'docker login -u me -p [REDACTED:password_flag] ghcr.io']
- kind: password_flag
  refs: []
  note: --password X, --password=X, --api-key "X", --hub_token X
  pattern: '((?:^|[^A-Za-z0-9_-])--?[A-Za-z0-9_-]*(?:%strong%|token)(?:=|[[:space:]]+))%notvalue%(?!-)("[^"\n]{3,}"|''[^''\n]{3,}''|(?=%bare%*[0-9!@#%^*+=/~?:-])%bare%{4,})'
  flags: gi
  replace: '\1[REDACTED:password_flag]'
  keywords: [pass, pwd, secret, token, key]
  examples:
  - ['psql --password=Ycytyxgg5uYB db', 'psql --password=[REDACTED:password_flag] db']
  - ['--push_to_hub --hub_token MpBSbu5XBVG1PPikvYet1', '--push_to_hub --hub_token [REDACTED:password_flag]']
  - ['app --api-key "two words" --x', 'app --api-key [REDACTED:password_flag] --x']
  negatives: ['--max_new_tokens 512', '--password-stdin', 'use the --password flag', '--token $HF_TOKEN']
- kind: password_flag
  refs: []
  note: a .netrc line
  pattern: '\m(machine[[:space:]]+[^[:space:]]+[[:space:]]+login[[:space:]]+[^[:space:]]+[[:space:]]+password[[:space:]]+)%notvalue%[^[:space:]]+'
  flags: gi
  replace: '\1[REDACTED:password_flag]'
  keywords: [password]
  examples:
  - ['machine api.example.com login me password zYRM1GWBZFVK', 'machine api.example.com login me password [REDACTED:password_flag]']
- kind: secret
  refs: [generic-api-key, database-password]
  note: a quoted literal after a name ending in a secret word, the whole of it (spaces too)
  pattern: '\m([A-Za-z0-9_.-]*%strong%)(%sep%)(["''`])%notvalue%([^"''`\n]{6,})(?=["''`])'
  flags: gi
  replace: '\1\2\3[REDACTED:secret]'
  keywords: [pass, pwd, secret, token, key]
  examples:
  - ['password = "hunter22"', 'password = "[REDACTED:secret]"']
  - ['password = "correct horse battery staple"', 'password = "[REDACTED:secret]"']
  - ['{"client_secret": "CLt4gRSCGtpgIDQpZWvq1Lwn"}', '{"client_secret": "[REDACTED:secret]"}']
  - ['hf_token = "hf_AbCdEfGhIjKlMn"', 'hf_token = "[REDACTED:secret]"']
  negatives:
  - 'if password == "x":'
  - '{"pad_token": "[PAD]"}'
  - 'bos_token = "<|endoftext|>"'
  - 'api_key = "${OPENAI_API_KEY}"'
  - 'password = "xxxxxxxx"'
  # real ML code and identifiers stay intact
  - 'tokenizer = AutoTokenizer.from_pretrained("gpt2")'
  - 'hf_token = AutoTokenizer.from_pretrained(x)'
  - 'tokenizer.pad_token = tokenizer.eos_token'
  - 'stop_token_ids=[50256, 25]'
  - 'token_ids = tokenizer.encode(text, max_tokens=512)'
  - 'password_field = forms.CharField(widget=forms.PasswordInput)'
  - 'model_id = "meta-llama/Llama-2-7b-hf"'
  - 'fixed in 3f2a9b1c0d4e5f60718293a4b5c6d7e8f9012345'
  - 'run_id: 123e4567-e89b-12d3-a456-426614174000'
  - 'sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
  - 'expected = "SGVsbG8gd29ybGQhIFRoaXMgaXMgYSB0ZXN0IGZpeHR1cmUu"'
  - 'use_auth_token=True, token=None'
- kind: secret
  refs: [generic-api-key, database-password]
  note: an unquoted value after a name ending in a secret word, when it has a digit or symbol and is not a dotted name
  pattern: '\m([A-Za-z0-9_.-]*%strong%)(%sep%)%notvalue%(?![A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:[^A-Za-z0-9_.]|$))(?=%bare%*[0-9!@#%^*+=/~?:-])(%bare%{6,})%end%'
  flags: gi
  replace: '\1\2[REDACTED:secret]'
  keywords: [pass, pwd, secret, token, key]
  examples:
  - ['passwd: s3cretpw', 'passwd: [REDACTED:secret]']
  - ['DB_PASSWORD=xyzzy12 ok', 'DB_PASSWORD=[REDACTED:secret] ok']
  - ['secret =abc123', 'secret =[REDACTED:secret]']
  - ['auth_token: abc123def', 'auth_token: [REDACTED:secret]']
  - ['pwd=abc1234', 'pwd=[REDACTED:secret]']
  - ['https://api.x.com/v1?api_key=abc123def&q=1', 'https://api.x.com/v1?api_key=[REDACTED:secret]&q=1']
  negatives: ['def login(password: str)', 'token = value.strip()', 'tokenizer.pad_token = tokenizer.eos_token', 'api_key = config_v2.api_key', 'pwd: /home/user/dir1', 'secret: embeddings', 'hf_token = os.environ["HF_TOKEN"]', 'auth_token = REDACTED:secret']
- kind: secret
  refs: [generic-api-key]
  note: an environment-style NAME=value, whatever the value looks like
  pattern: '\m([A-Z0-9_]*(?:PASSWORD|PASSWD|PASSPHRASE|PWD|SECRET|TOKEN|(?:API|ACCESS|SECRET|PRIVATE|ACCOUNT|AUTH|MASTER|ENCRYPTION|SIGNING|LICENSE|CLIENT)_?KEY|CREDENTIALS?))(=)%notvalue%([^[:space:]"''`;&|]{6,})'
  replace: '\1\2[REDACTED:secret]'
  keywords: [pass, pwd, secret, token, key, credential]
  examples:
  - ['PRIVATE_KEY=abcdef', 'PRIVATE_KEY=[REDACTED:secret]']
  - ['export WANDB_API_KEY=letmeinnow', 'export WANDB_API_KEY=[REDACTED:secret]']
  negatives: ['MAX_NEW_TOKENS=512', 'HF_TOKEN=$HF_TOKEN', 'TOKENIZERS_PARALLELISM=false']
- kind: secret
  refs: [generic-api-key]
  note: a value that looks like a key (16+ chars, letters and digits) after a name ending in token, auth or credentials
  pattern: '\m([A-Za-z0-9_.-]*%weak%)(%sep%)(["''`]?)%notvalue%(?=[A-Za-z0-9_+=-]*[0-9])(?=[A-Za-z0-9_+=-]*[A-Za-z])([A-Za-z0-9_+=-]{16,})(?=$|[^A-Za-z0-9_+/=.([-])'
  flags: gi
  replace: '\1\2\3[REDACTED:secret]'
  keywords: [token, credential, auth]
  examples:
  - ['token: WNeDcYJ1PNd8MtyS6k9xNLGE9', 'token: [REDACTED:secret]']
  - ['"auth": "2fb383e8f1c7edbe656f8e6ea5b6b099"', '"auth": "[REDACTED:secret]"']
  negatives: ['token = "meta-llama/Llama-2-7b-hf"', 'eos_token_id=128009', 'pad_token = tokenizer_v2.eos_token', 'model_key = "bert-base-uncased"', 'key: sha256:496d00973301737e10ec2befa6fb2b78045059d46e07d30207347cf578da7706']
- kind: secret
  refs: [generic-api-key]
  note: a value shaped like a key after a name ending in key, whatever the name (key=, "key":, KAGGLE_KEY=, wandb.login(key=...), os.environ["X_KEY"])
  pattern: '\m([A-Za-z0-9_.-]*[Kk][Ee][Yy])(%sep%)(["''`]?)%keylike%'
  replace: '\1\2\3[REDACTED:secret]'
  # what can follow the name: a quote, a bracket, a space, = or : (not KeyError, keys())
  keywords: ['key=', 'key:', 'key"', "key'", 'key]', 'key ']
  examples:
  - ['wandb.login(key="06b40928b5b7a767c76fb008f86bebb2737f6a6f")', 'wandb.login(key="[REDACTED:secret]")']
  - ['{"username":"someone","key":"4028d512c9791e558e08baa7196b50ac"}', '{"username":"someone","key":"[REDACTED:secret]"}']
  - ['export KAGGLE_KEY=2f86702824c1c099724caf4941d40720', 'export KAGGLE_KEY=[REDACTED:secret]']
  - ['os.environ["WANDB_API_KEY"] = "0fb23c6f5da2cec255404e4fb440034d6608697a"', 'os.environ["WANDB_API_KEY"] = "[REDACTED:secret]"']
  - ['comet_key: NWiP3sFd67JikEAvstqVVPqzPptEJQzhkPkenG5Z', 'comet_key: [REDACTED:secret]']
  negatives:
  - 'key = "model.layers.0.self_attn.q_proj.weight"'
  - 'key="input_ids_2024_version_v2"'
  - 'sort_key=lambda x: x[0]'
  - 'primary_key=True'
  - 'hotkey = "Ctrl+Shift+K"'
  - 'public_key: "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEaWxmTn9c+7RQ7VzBjM2wZ3hkTzBLpeSk"'
  - 'cache_key = f"{model_name}-{revision}"'
- kind: secret
  refs: [generic-api-key]
  note: a key passed positionally to a known client (cohere.Client, MistralClient, Together, OpenAI, Anthropic, Groq ...; twilio's Client(sid, token) keeps the sid)
  pattern: '\m((?:[A-Za-z_][A-Za-z0-9_]*\.)*(?:[A-Za-z0-9_]*[Cc]lient(?:V[0-9])?|(?:Async)?(?:Mistral|Together|OpenAI|AzureOpenAI|Anthropic|Groq|Cohere|Fireworks|Replicate|Pinecone|Cerebras|DeepSeek|Perplexity))\([[:space:]]*(?:["''][^"''\n]{1,100}["''][[:space:]]*,[[:space:]]*)?["''])%keylike%(?=["''])'
  replace: '\1[REDACTED:secret]'
  keywords: ['client(', 'clientv1(', 'clientv2(', 'mistral(', 'together(', 'openai(', 'anthropic(', 'groq(', 'cohere(', 'fireworks(', 'replicate(', 'pinecone(', 'cerebras(', 'deepseek(', 'perplexity(']
  examples:
  - ['co = cohere.Client("FJoC6vWCBiJmpflvJfupxqZKm4bV3AyAVHnyrvWd")', 'co = cohere.Client("[REDACTED:secret]")']
  - ['client = MistralClient(''cPTt9iOqHOBSWhgetH8LmyqoYMaaItDr'')', 'client = MistralClient(''[REDACTED:secret]'')']
  - ['client = Together("2248b483b7ffc050fec94dbca3a0aac36098b2cc2bd818319478da6bd0c621de")', 'client = Together("[REDACTED:secret]")']
  - ['client = Client("AC14b3ce107f80e222f828767efc2f9162", "4a8940f1f836f99eee3692f09e2e8c66")', 'client = Client("AC14b3ce107f80e222f828767efc2f9162", "[REDACTED:secret]")']
  negatives: ['client = Client("localhost", 8080)', 'OpenAI("gpt-4o-mini-2024-07-18")', 'Client("https://api.example.com")']
- kind: secret
  refs: [generic-api-key, database-password]
  note: a secret name and its value as two quoted arguments (os.environ.setdefault, os.putenv, monkeypatch.setenv, getenv's default)
  pattern: '(["''][A-Za-z0-9_.-]*%strong%["''][[:space:]]*,[[:space:]]*["''])%notvalue%[^][:space:]"''`()<>{}]{6,}(?=["''])'
  flags: gi
  replace: '\1[REDACTED:secret]'
  # the name's last letters, its closing quote and the comma
  keywords: ['d",', "d',", 'e",', "e',", 't",', "t',", 'y",', "y',", 'n",', "n',", 'id",', "id',"]
  examples:
  - ['os.environ.setdefault("WANDB_API_KEY", "e4d3cea27d26934b484e73cf575dcad6ba2b0aee")', 'os.environ.setdefault("WANDB_API_KEY", "[REDACTED:secret]")']
  - ['monkeypatch.setenv(''DB_PASSWORD'', ''hunter2x'')', 'monkeypatch.setenv(''DB_PASSWORD'', ''[REDACTED:secret]'')']
  negatives: ['parser.add_argument("--api_key", "-k")', 'os.environ.get("HF_TOKEN", "")', 'Field("password", "Enter your password")', 'os.getenv("API_KEY", "None")']
- kind: secret
  refs: [generic-api-key]
  note: a key-shaped value a sentence or a .netrc line says is a key, token, secret or password ("my wandb key is ...", "password ...")
  pattern: '\m((?:[Kk][Ee][Yy]|[Tt]oken|TOKEN|[Ss]ecret|SECRET|[Pp]assword|PASSWORD)[[:space:]]+(?:(?:is|was|IS|WAS)[[:space:]]+)?["''`]?)%keylike%'
  replace: '\1[REDACTED:secret]'
  keywords: ['key ', 'token ', 'secret ', 'password ', "key\n", "token\n", "secret\n", "password\n", "key\t", "token\t", "secret\t", "password\t"]
  examples:
  - ['my wandb key is 8d41bed440e50454f31af3176813e02ea68ef786, sorry', 'my wandb key is [REDACTED:secret], sorry']
  - ['  login user\n  password 0ca923732881584d8c4fa2815d2802827283e0ad', '  login user\n  password [REDACTED:secret]']
  - ['the token `FrK9xiRGHOY32nfr5pyzPCB9t2039bicBTW5ZE9L` expired', 'the token `[REDACTED:secret]` expired']
  negatives: ['the key is 8f14e45 in the cache', 'token is LlamaTokenizerFast', 'the key is input_ids_2024']
{% endraw %}{%- endmacro %}

{#- The catalog, parsed: parts expanded into patterns, examples decoded, defaults filled. -#}
{% macro relore_secret_catalog() -%}
    {#- sqlfluff's plain jinja templater has no fromyaml: it lints the SQL around the rules -#}
    {%- if fromyaml is not defined -%}{{ return([]) }}{%- endif -%}
    {%- set source = fromyaml(relore_secret_catalog_source()) -%}
    {%- set entries = [] -%}
    {%- for entry in source['entries'] -%}
        {%- set pattern = namespace(text=entry['pattern']) -%}
        {%- for name, part in source['parts'].items() -%}
            {%- set pattern.text = pattern.text | replace('%' ~ name ~ '%', part) -%}
        {%- endfor -%}
        {%- set examples = [] -%}
        {%- for pair in entry.get('examples', []) -%}
            {%- do examples.append([relore_catalog_text(pair[0]), relore_catalog_text(pair[1])]) -%}
        {%- endfor -%}
        {%- set negatives = [] -%}
        {%- for text in entry.get('negatives', []) -%}
            {%- do negatives.append(relore_catalog_text(text)) -%}
        {%- endfor -%}
        {%- do entries.append({
            'kind': entry['kind'],
            'refs': entry.get('refs', []),
            'note': entry.get('note', ''),
            'pattern': pattern.text,
            'flags': entry.get('flags', 'g'),
            'replace': entry.get('replace', '[REDACTED:' ~ entry['kind'] ~ ']'),
            'keywords': entry.get('keywords', []),
            'guard': entry.get('guard', ''),
            'examples': examples,
            'negatives': negatives,
        }) -%}
    {%- endfor -%}
    {{ return(entries) }}
{%- endmacro %}

{#- An example as written (\n a line break, \\n a backslash and n, \u{200B} a code point)
    -> its text. -#}
{% macro relore_catalog_text(written) -%}
    {%- set text = written | replace('\\\\n', '\x01') | replace('\\n', '\n')
        | replace('\x01', '\\n') -%}
    {%- set parts = text.split('\\u{') -%}
    {%- set out = namespace(text=parts[0]) -%}
    {%- for part in parts[1:] -%}
        {%- set pieces = part.split('}', 1) -%}
        {%- set out.text = out.text ~ ('%c' | format(pieces[0] | int(base=16))) ~ pieces[1] -%}
    {%- endfor -%}
    {{ return(out.text) }}
{%- endmacro %}

{#- How many catalog entries share one prefilter match (see relore_redact). -#}
{% macro relore_secret_bucket_size() -%}
    {{ return(15) }}
{%- endmacro %}

{#-
    The necessary condition of some entries, as a SQL boolean: the lower-cased text `folded`
    holds one of their keywords (strpos, each a literal) or `input` matches one of their
    guards (each as written). Text failing it cannot change under those entries' rules
    (assert_redaction_catalog redacts every example, so a keyword or guard that misses its
    own example fails it). strpos over a lower-cased copy, not one case-insensitive regex:
    PostgreSQL's regex reads a character in ~0.2 us under a twenty-word alternation, and
    the regex cache (32 patterns) evicts the entries' own patterns; a keyword's strpos is a
    byte search. lower() folds at least what `~*` does, so the condition only widens, and an
    entry's own keywords are tested on the same folded text.
-#}
{% macro relore_secret_prefilter(entries, folded, input) -%}
    {%- set keywords = [] -%}
    {%- set guards = [] -%}
    {%- for entry in entries -%}
        {%- for keyword in entry['keywords'] -%}
            {%- if keyword not in keywords -%}{%- do keywords.append(keyword) -%}{%- endif -%}
        {%- endfor -%}
        {%- if entry['guard'] and entry['guard'] not in guards -%}
            {%- do guards.append(entry['guard']) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set tests = [] -%}
    {%- for keyword in keywords -%}
        {%- set literal = keyword | replace("'", "''") -%}
        {%- do tests.append("strpos(" ~ folded ~ ", '" ~ literal ~ "') > 0") -%}
    {%- endfor -%}
    {%- for guard in guards -%}
        {%- do tests.append(input ~ " ~ '" ~ (guard | replace("'", "''")) ~ "'") -%}
    {%- endfor -%}
    ({{ tests | join(' or ') }})
{%- endmacro %}
