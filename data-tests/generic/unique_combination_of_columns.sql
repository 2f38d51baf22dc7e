{#- Fails for each combination of the columns that occurs more than once (dbt_utils' test). -#}
{% test unique_combination_of_columns(model, combination_of_columns) %}

    select
        {{ combination_of_columns | join(', ') }},
        count(*) as occurrences
    from {{ model }}
    group by {{ combination_of_columns | join(', ') }}
    having count(*) > 1

{% endtest %}
