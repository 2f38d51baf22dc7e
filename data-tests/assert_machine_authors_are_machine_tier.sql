-- A document by a bot (user type Bot, a [bot] login) or a configured machine account is
-- never in another tier: machine output is excluded from reads as a security property.
select
    documents.repo_id,
    documents.document_id,
    documents.author_login,
    documents.trust_tier
from {{ ref('documents') }} as documents
where
    documents.trust_tier != 'machine'
    and (
        documents.author_type = 'Bot'
        or documents.author_login like '%[bot]'
        or exists (
            select 1
            from {{ ref('machine_accounts') }} as machine_accounts
            where
                machine_accounts.login = documents.author_login
                and (
                    coalesce(machine_accounts.repo, '') = ''
                    or lower(machine_accounts.repo) = lower(documents.repo)
                )
        )
    )
