{#- Fails when the newest value of `field` is older than `interval` (e.g. '3 days'). -#}
{% test recency(model, field, interval) %}

    select max({{ field }}) as most_recent
    from {{ model }}
    having
        max({{ field }}) is null
        or max({{ field }}) < now() - interval '{{ interval }}'

{% endtest %}
