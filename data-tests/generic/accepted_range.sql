{#- Fails for each non-null value outside [min_value, max_value] (bounds optional). -#}
{% test accepted_range(model, column_name, min_value=none, max_value=none, inclusive=true) %}
    {%- set outside = ['false'] -%}
    {%- if min_value is not none -%}
        {%- do outside.append(column_name ~ (' < ' if inclusive else ' <= ') ~ min_value) -%}
    {%- endif -%}
    {%- if max_value is not none -%}
        {%- do outside.append(column_name ~ (' > ' if inclusive else ' >= ') ~ max_value) -%}
    {%- endif -%}

    select *
    from {{ model }}
    where
        {{ column_name }} is not null
        and ({{ outside | join(' or ') }})

{% endtest %}
