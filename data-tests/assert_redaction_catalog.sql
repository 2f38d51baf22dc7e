-- relore_redact against each entry of its catalog, and what it must leave alone.
with

cases (input, expected) as (
    values
    ('t ghp_abcdefghijklmnopqrstuvwxyz0123456789 x', 't [REDACTED:github_token] x'),
    ('gho_abcdefghijklmnopqrstuvwxyz0123456789', '[REDACTED:github_token]'),
    ('github_pat_11ABCDEFG0123456789_abcdefghijklmnop', '[REDACTED:github_token]'),
    ('id AKIAIOSFODNN7EXAMPLE.', 'id [REDACTED:aws_access_key].'),
    ('xoxb-123456789012-1234567890123-abcdefghijkl', '[REDACTED:slack_token]'),
    ('k=AIzaSyA-1234567890abcdefghijklmnopqrstu', 'k=[REDACTED:google_api_key]'),
    (
        'a' || chr(10) || '-----BEGIN RSA PRIVATE KEY-----' || chr(10) || 'MIIEab+/=='
        || chr(10) || '-----END RSA PRIVATE KEY-----' || chr(10) || 'b',
        'a' || chr(10) || '[REDACTED:private_key]' || chr(10) || 'b'
    ),
    ('-----BEGIN PRIVATE KEY-----' || chr(10) || 'MIIEab', '[REDACTED:private_key]'),
    (
        'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N',
        '[REDACTED:jwt]'
    ),
    ('password = "hunter22"', 'password = "[REDACTED:secret]"'),
    ('passwd: s3cretpw', 'passwd: [REDACTED:secret]'),
    ('DB_PASSWORD=xyzzy12 ok', 'DB_PASSWORD=[REDACTED:secret] ok'),
    ('secret =abc123', 'secret =[REDACTED:secret]'),
    -- one per alternative of relore_secret_prefilter that no case above reaches
    ('API_KEY=zzz999x', 'API_KEY=[REDACTED:secret]'),
    ('auth_token: abc123def', 'auth_token: [REDACTED:secret]'),
    ('aws_access_key=qwerty123', 'aws_access_key=[REDACTED:secret]'),
    ('pwd=abc1234', 'pwd=[REDACTED:secret]'),
    ('PRIVATE_KEY=abcdef', 'PRIVATE_KEY=[REDACTED:secret]'),
    ('x ASIAIOSFODNN7EXAMPLE', 'x [REDACTED:aws_access_key]'),
    -- left alone: code that names a password, a comparison, prose
    ('def login(password: str)', 'def login(password: str)'),
    ('if password == "x":', 'if password == "x":'),
    ('token = value.strip()', 'token = value.strip()'),
    ('the ghp_ prefix and AKIA keys', 'the ghp_ prefix and AKIA keys'),
    -- left alone: tokenizer code (names that merely contain a keyword, calls, lists,
    -- special tokens), and an earlier redaction whose brackets markdown_to_text dropped
    (
        'tokenizer = AutoTokenizer.from_pretrained("gpt2")',
        'tokenizer = AutoTokenizer.from_pretrained("gpt2")'
    ),
    ('hf_token = AutoTokenizer.from_pretrained(x)', 'hf_token = AutoTokenizer.from_pretrained(x)'),
    ('stop_token_ids=[50256, 25]', 'stop_token_ids=[50256, 25]'),
    ('{"pad_token": "[PAD]"}', '{"pad_token": "[PAD]"}'),
    ('bos_token = "<|endoftext|>"', 'bos_token = "<|endoftext|>"'),
    ('auth_token = REDACTED:secret', 'auth_token = REDACTED:secret'),
    -- still a secret: a literal after a name ending in a keyword
    ('hf_token = "hf_AbCdEfGhIjKlMn"', 'hf_token = "[REDACTED:secret]"'),
    ('SECRET_KEY=s3cr3t-v4lue', 'SECRET_KEY=[REDACTED:secret]')
),

checked as (
    select
        input,
        expected,
        {{ relore_fn('redact') }}(input) as actual,
        {{ relore_fn('redact') }}({{ relore_fn('redact') }}(input)) as twice
    from cases
)

select * from checked
where actual is distinct from expected or twice is distinct from actual
