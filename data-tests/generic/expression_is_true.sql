{#-
    Fails for each row where the SQL expression is not true (null counts as a failure).
    With column_name, the expression is applied to it: expression: "> 0".
-#}
{% test expression_is_true(model, expression, column_name=none) %}
    {%- set condition = expression -%}
    {%- if column_name -%}
        {%- set condition = column_name ~ ' ' ~ expression -%}
    {%- endif -%}

    select *
    from {{ model }}
    where not coalesce({{ condition }}, false)

{% endtest %}
