<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="es" sourcelanguage="en">
<context>
    <name>Calibration</name>
    <message>
        <source>the same set of options counts as met</source>
        <translation>cuenta como acierto el mismo conjunto de opciones</translation>
    </message>
    <message>
        <source>an exact match counts as met</source>
        <translation>cuenta como acierto la coincidencia exacta</translation>
    </message>
    <message>
        <source>within one point counts as met</source>
        <translation>cuenta como acierto a un punto o menos</translation>
    </message>
    <message>
        <source>{rule} counts as met</source>
        <translation>cuenta como acierto: {rule}</translation>
    </message>
    <message>
        <source>How your answer compares (anchor {index} of {total})</source>
        <translation>Cómo se compara tu respuesta (ancla {index} de {total})</translation>
    </message>
    <message>
        <source>You met the reference on {met} of {n} scored metrics. Read the rationale where you differ; it is the reasoning the reference follows.</source>
        <translation>Coincidiste con la referencia en {met} de {n} métricas puntuadas. Lee la justificación donde difieres: es el razonamiento que sigue la referencia.</translation>
    </message>
    <message>
        <source>met</source>
        <translation>acierto</translation>
    </message>
    <message>
        <source>not scored</source>
        <translation>sin puntuar</translation>
    </message>
    <message>
        <source>not met</source>
        <translation>sin acierto</translation>
    </message>
    <message>
        <source>Your answer beside the reference</source>
        <translation>Tu respuesta junto a la referencia</translation>
    </message>
    <message>
        <source>Your answer: {answer}</source>
        <translation>Tu respuesta: {answer}</translation>
    </message>
    <message>
        <source>Reference: {answer}</source>
        <translation>Referencia: {answer}</translation>
    </message>
    <message>
        <source>{keys}: see your result</source>
        <translation>{keys}: ver tu resultado</translation>
    </message>
    <message>
        <source>{keys}: next anchor</source>
        <translation>{keys}: siguiente ancla</translation>
    </message>
    <message>
        <source>Result per metric</source>
        <translation>Resultado por métrica</translation>
    </message>
    <message>
        <source>Your calibration history</source>
        <translation>Tu historial de calibración</translation>
    </message>
    <message>
        <source>Every session, oldest first</source>
        <translation>Todas las sesiones, de la más antigua a la más reciente</translation>
    </message>
    <message>
        <source>This result is stored.</source>
        <translation>Este resultado queda guardado.</translation>
    </message>
    <message>
        <source>This result is stored. {keys}: done.</source>
        <translation>Este resultado queda guardado. {keys}: terminar.</translation>
    </message>
    <message>
        <source>Qualified</source>
        <translation>Cualificado</translation>
    </message>
    <message>
        <source>Not yet qualified</source>
        <translation>Todavía no cualificado</translation>
    </message>
    <message>
        <source>Your calibration verdict</source>
        <translation>Tu veredicto de calibración</translation>
    </message>
    <message>
        <source>You met every qualification rule over {n} anchors.</source>
        <translation>Cumpliste todas las reglas de cualificación en {n} anclas.</translation>
    </message>
    <message>
        <source>Not yet: {metrics} fell short of the rule. Review the rationales and run another calibration session when you are ready.</source>
        <translation>Todavía no: {metrics} no alcanzó la regla. Repasa las justificaciones y haz otra sesión de calibración cuando estés listo.</translation>
    </message>
    <message>
        <source>Not yet: no metric could be scored.</source>
        <translation>Todavía no: no se pudo puntuar ninguna métrica.</translation>
    </message>
    <message>
        <source>metric</source>
        <translation>métrica</translation>
    </message>
    <message>
        <source>rule</source>
        <translation>regla</translation>
    </message>
    <message>
        <source>share</source>
        <translation>proporción</translation>
    </message>
    <message>
        <source>needed</source>
        <translation>necesario</translation>
    </message>
    <message>
        <source>{met} of {n}</source>
        <translation>{met} de {n}</translation>
    </message>
    <message>
        <source>passed</source>
        <translation>superada</translation>
    </message>
    <message>
        <source>not yet</source>
        <translation>todavía no</translation>
    </message>
    <message>
        <source>Before: your previous session ({when}, {verdict}).  After: this session.</source>
        <translation>Antes: tu sesión anterior ({when}, {verdict}).  Después: esta sesión.</translation>
    </message>
    <message>
        <source>qualified</source>
        <translation>cualificado</translation>
    </message>
    <message>
        <source>This is your first calibration session; later sessions are shown beside it.</source>
        <translation>Esta es tu primera sesión de calibración; las siguientes se mostrarán a su lado.</translation>
    </message>
    <message>
        <source>before</source>
        <translation>antes</translation>
    </message>
    <message>
        <source>after</source>
        <translation>después</translation>
    </message>
    <message>
        <source>change</source>
        <translation>cambio</translation>
    </message>
    <message>
        <source>no change</source>
        <translation>sin cambio</translation>
    </message>
    <message>
        <source>{diff} points</source>
        <translation>{diff} puntos</translation>
    </message>
    <message>
        <source>when</source>
        <translation>cuándo</translation>
    </message>
    <message>
        <source>verdict</source>
        <translation>veredicto</translation>
    </message>
    <message>
        <source>Calibration</source>
        <translation>Calibración</translation>
    </message>
    <message>
        <source>Progress</source>
        <translation>Progreso</translation>
    </message>
    <message>
        <source>Which anchor of how many</source>
        <translation>Qué ancla de cuántas</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>Enunciado</translation>
    </message>
    <message>
        <source>What the output was asked to be</source>
        <translation>Lo que se pidió que fuera el resultado</translation>
    </message>
    <message>
        <source>Criteria</source>
        <translation>Criterios</translation>
    </message>
    <message>
        <source>What the output is judged against</source>
        <translation>Frente a qué se juzga el resultado</translation>
    </message>
    <message>
        <source>{key}: submit and see the reference</source>
        <translation>{key}: enviar y ver la referencia</translation>
    </message>
    <message>
        <source>Answer form</source>
        <translation>Formulario de respuesta</translation>
    </message>
    <message>
        <source>One row per metric of the rubric; the framed one takes the keys</source>
        <translation>Una fila por métrica de la rúbrica; la enmarcada recibe las teclas</translation>
    </message>
    <message>
        <source>Opening the calibration session…</source>
        <translation>Abriendo la sesión de calibración…</translation>
    </message>
    <message>
        <source>Calibration cannot start: {why}</source>
        <translation>La calibración no puede empezar: {why}</translation>
    </message>
    <message>
        <source>Working out your result…</source>
        <translation>Calculando tu resultado…</translation>
    </message>
    <message>
        <source>Anchor {index} of {total}</source>
        <translation>Ancla {index} de {total}</translation>
    </message>
    <message>
        <source>Criteria: {text}</source>
        <translation>Criterios: {text}</translation>
    </message>
    <message>
        <source>Loading images…</source>
        <translation>Cargando imágenes…</translation>
    </message>
    <message>
        <source>1 anchor answered</source>
        <translation>1 ancla respondida</translation>
    </message>
    <message>
        <source>{n} anchors answered</source>
        <translation>{n} anclas respondidas</translation>
    </message>
    <message>
        <source>Keys: {p} / {f} gates, digits for scales, points and tags, {x} can&apos;t judge, {next} / {prev} next / previous metric, {r} reason, {enter} submit.</source>
        <translation>Teclas: {p} / {f} puertas, dígitos para escalas, puntos y etiquetas, {x} no se puede juzgar, {next} / {prev} métrica siguiente / anterior, {r} motivo, {enter} enviar.</translation>
    </message>
    <message>
        <source>Answer {metrics} first (or press {key} if you cannot judge it).</source>
        <translation>Responde primero {metrics} (o pulsa {key} si no se puede juzgar).</translation>
    </message>
</context>
<context>
    <name>DashboardView</name>
    <message>
        <source>Follow changes  [{key}]</source>
        <translation>Seguir los cambios  [{key}]</translation>
    </message>
    <message>
        <source>Follow changes</source>
        <translation>Seguir los cambios</translation>
    </message>
    <message>
        <source>Recomputes the figures when the study changes, at most every {secs} s</source>
        <translation>Recalcula las cifras cuando el estudio cambia, como mucho cada {secs} s</translation>
    </message>
    <message>
        <source>Earlier figures</source>
        <translation>Cifras anteriores</translation>
    </message>
    <message>
        <source>Whether the figures shown are older than the study</source>
        <translation>Si las cifras mostradas son más antiguas que el estudio</translation>
    </message>
    <message>
        <source>These figures are from {when}, before the latest changes to the study; the current ones are being computed.</source>
        <translation>Estas cifras son de {when}, anteriores a los últimos cambios del estudio; se están calculando las actuales.</translation>
    </message>
    <message>
        <source>The study has changed since these figures ({when}); {key} recomputes.</source>
        <translation>El estudio ha cambiado desde estas cifras ({when}); {key} las recalcula.</translation>
    </message>
    <message>
        <source>(no chart: nothing to draw)</source>
        <translation>(sin gráfico: nada que dibujar)</translation>
    </message>
    <message>
        <source>The first {shown} of {n} items; the HTML report shows them all.</source>
        <translation>Los primeros {shown} de {n} ítems; el informe HTML los muestra todos.</translation>
    </message>
    <message>
        <source>Study dashboard: {name}</source>
        <translation>Panel del estudio: {name}</translation>
    </message>
    <message>
        <source>The study lead&apos;s dashboard</source>
        <translation>El panel de quien dirige el estudio</translation>
    </message>
    <message>
        <source>Computation</source>
        <translation>Cálculo</translation>
    </message>
    <message>
        <source>What the dashboard is computing, or how long it took</source>
        <translation>Qué está calculando el panel, o cuánto tardó</translation>
    </message>
    <message>
        <source>Progress</source>
        <translation>Progreso</translation>
    </message>
    <message>
        <source>How far the computation has got</source>
        <translation>Cuánto ha avanzado el cálculo</translation>
    </message>
    <message>
        <source>Recompute  [{key}]</source>
        <translation>Recalcular  [{key}]</translation>
    </message>
    <message>
        <source>Recompute</source>
        <translation>Recalcular</translation>
    </message>
    <message>
        <source>Computes the report again ({key}); {cancel} cancels</source>
        <translation>Vuelve a calcular el informe ({key}); {cancel} cancela</translation>
    </message>
    <message>
        <source>For the study lead: this page names generators and raters. Raters never see it.</source>
        <translation>Para quien dirige el estudio: esta página nombra generadores y evaluadores. Los evaluadores nunca la ven.</translation>
    </message>
    <message>
        <source>Report</source>
        <translation>Informe</translation>
    </message>
    <message>
        <source>The report&apos;s sections; page with the keys below</source>
        <translation>Las secciones del informe; se recorren con las teclas de abajo</translation>
    </message>
    <message>
        <source>Keys: {down} / {up} page, {top} / {bottom}, {next} / {prev} next / previous section, {refresh} recompute, {cancel} cancel, {live} follow changes.</source>
        <translation>Teclas: {down} / {up} página, {top} / {bottom}, {next} / {prev} sección siguiente / anterior, {refresh} recalcular, {cancel} cancelar, {live} seguir los cambios.</translation>
    </message>
    <message>
        <source>Reading the study…</source>
        <translation>Leyendo el estudio…</translation>
    </message>
    <message>
        <source>Live estimate in {secs} s, without resampling.</source>
        <translation>Estimación en vivo en {secs} s, sin remuestreo.</translation>
    </message>
    <message>
        <source>Live estimate: every figure in the tables is of the current answers but the raters' competence and the latent truth (EM fits, marked &quot;as of {when}&quot;); the intervals (marked ≈) are carried from the exact figures of {when}, and the charts are those exact figures' (marked &quot;as of {when}&quot;). The exact figures are recomputed in about {secs} s ({key} now).</source>
        <translation>Estimación en vivo: cada cifra de las tablas es de las respuestas actuales salvo la competencia de los evaluadores y la verdad latente (ajustes EM, marcados con la hora {when}); los intervalos (marcados con ≈) se toman de las cifras exactas de {when}, y los gráficos son los de esas cifras exactas (marcados con la hora {when}). Las cifras exactas se recalculan en unos {secs} s ({key} ahora).</translation>
    </message>
    <message>
        <source>Computing the report: {step}…</source>
        <translation>Calculando el informe: {step}…</translation>
    </message>
    <message>
        <source>Unchanged since the last computation: shown at once ({secs} s).</source>
        <translation>Sin cambios desde el último cálculo: se muestra al instante ({secs} s).</translation>
    </message>
    <message>
        <source>Computed in {secs} s with {n} bootstrap resamples.</source>
        <translation>Calculado en {secs} s con {n} remuestreos bootstrap.</translation>
    </message>
    <message>
        <source>Cancelled. The figures shown are from the last computation.</source>
        <translation>Cancelado. Las cifras mostradas son del último cálculo.</translation>
    </message>
    <message>
        <source>Cancelled. {key} computes.</source>
        <translation>Cancelado. {key} calcula.</translation>
    </message>
    <message>
        <source>The report could not be computed: {why}</source>
        <translation>No se pudo calcular el informe: {why}</translation>
    </message>
</context>
<context>
    <name>InstructionsDialog</name>
    <message>
        <source>Instructions: {title}</source>
        <translation>Instrucciones: {title}</translation>
    </message>
    <message>
        <source>Instructions</source>
        <translation>Instrucciones</translation>
    </message>
    <message>
        <source>The rubric&apos;s instructions, its metrics, verdict rules and keys</source>
        <translation>Las instrucciones de la rúbrica, sus métricas, reglas de veredicto y teclas</translation>
    </message>
    <message>
        <source>Close ({key} or {other})</source>
        <translation>Cerrar ({key} o {other})</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Cerrar</translation>
    </message>
    <message>
        <source>Closes the instructions</source>
        <translation>Cierra las instrucciones</translation>
    </message>
    <message>
        <source>Metrics</source>
        <translation>Métricas</translation>
    </message>
    <message>
        <source>Verdict rules</source>
        <translation>Reglas de veredicto</translation>
    </message>
    <message>
        <source>Keys</source>
        <translation>Teclas</translation>
    </message>
    <message>
        <source>Keys everywhere in the app</source>
        <translation>Teclas en toda la aplicación</translation>
    </message>
</context>
<context>
    <name>ItemDisplay</name>
    <message>
        <source>This item has no output to show.</source>
        <translation>Este ítem no tiene resultado que mostrar.</translation>
    </message>
    <message>
        <source>An image of this output could not be shown: answer from what you can see, or say you cannot judge.</source>
        <translation>No se pudo mostrar una imagen de este resultado: responde según lo que veas, o indica que no se puede juzgar.</translation>
    </message>
    <message>
        <source>Item code</source>
        <translation>Código del ítem</translation>
    </message>
    <message>
        <source>The item&apos;s opaque code (it names nothing)</source>
        <translation>El código opaco del ítem (no nombra nada)</translation>
    </message>
    <message>
        <source>Item</source>
        <translation>Ítem</translation>
    </message>
    <message>
        <source>Which side</source>
        <translation>Qué lado</translation>
    </message>
    <message>
        <source>Note</source>
        <translation>Nota</translation>
    </message>
    <message>
        <source>About the images</source>
        <translation>Sobre las imágenes</translation>
    </message>
    <message>
        <source>Text output</source>
        <translation>Resultado en texto</translation>
    </message>
    <message>
        <source>The output to judge, as text</source>
        <translation>El resultado a juzgar, en texto</translation>
    </message>
    <message>
        <source>Input</source>
        <translation>Entrada</translation>
    </message>
    <message>
        <source>Input {n}</source>
        <translation>Entrada {n}</translation>
    </message>
    <message>
        <source>Output</source>
        <translation>Resultado</translation>
    </message>
    <message>
        <source>Output {n}</source>
        <translation>Resultado {n}</translation>
    </message>
    <message>
        <source>An image to judge; zoom with {zin} / {zout}, fit with {fit}</source>
        <translation>Una imagen a juzgar; amplía con {zin} / {zout}, ajusta con {fit}</translation>
    </message>
    <message>
        <source>Caption of the image below</source>
        <translation>Rótulo de la imagen de abajo</translation>
    </message>
    <message>
        <source>{caption}  ·  edit mask shown ({key})</source>
        <translation>{caption}  ·  máscara de edición visible ({key})</translation>
    </message>
    <message>
        <source>{caption}  ·  edit mask hidden ({key})</source>
        <translation>{caption}  ·  máscara de edición oculta ({key})</translation>
    </message>
</context>
<context>
    <name>LabelView</name>
    <message>
        <source>less than a minute left</source>
        <translation>queda menos de un minuto</translation>
    </message>
    <message>
        <source>Your unfinished answer to this item was kept from last time: check it, then submit.</source>
        <translation>Tu respuesta sin terminar a este elemento se conservó de la última vez: revísala y después envíala.</translation>
    </message>
    <message>
        <source>{done} / {total} done</source>
        <translation>{done} / {total} hechos</translation>
    </message>
    <message>
        <source>{n} this session</source>
        <translation>{n} en esta sesión</translation>
    </message>
    <message>
        <source>{n} per hour</source>
        <translation>{n} por hora</translation>
    </message>
    <message>
        <source>about {n} min left</source>
        <translation>quedan unos {n} min</translation>
    </message>
    <message>
        <source>about {n} h left</source>
        <translation>quedan unas {n} h</translation>
    </message>
    <message>
        <source>Recalibrate now ({key})</source>
        <translation>Recalibrar ahora ({key})</translation>
    </message>
    <message>
        <source>Continue labelling ({key})</source>
        <translation>Seguir evaluando ({key})</translation>
    </message>
    <message>
        <source>Recalibrate now</source>
        <translation>Recalibrar ahora</translation>
    </message>
    <message>
        <source>Opens a short session that brings your answers back in line</source>
        <translation>Abre una sesión corta que vuelve a alinear tus respuestas</translation>
    </message>
    <message>
        <source>Continue labelling</source>
        <translation>Seguir evaluando</translation>
    </message>
    <message>
        <source>Closes the drift notice</source>
        <translation>Cierra el aviso de deriva</translation>
    </message>
    <message>
        <source>Drift notice</source>
        <translation>Aviso de deriva</translation>
    </message>
    <message>
        <source>A notice about your recent answers</source>
        <translation>Un aviso sobre tus respuestas recientes</translation>
    </message>
    <message>
        <source>Opening the label session…</source>
        <translation>Abriendo la sesión de evaluación…</translation>
    </message>
    <message>
        <source>Zoom {zin} / {zout}, fit {fit}, 100 % {actual}, wheel and drag on the image</source>
        <translation>Zoom {zin} / {zout}, ajustar {fit}, 100 % {actual}, rueda y arrastre sobre la imagen</translation>
    </message>
    <message>
        <source>Progress</source>
        <translation>Progreso</translation>
    </message>
    <message>
        <source>Items done, this session, pace and time left</source>
        <translation>Ítems hechos, en esta sesión, ritmo y tiempo restante</translation>
    </message>
    <message>
        <source>Zoom keys</source>
        <translation>Teclas de zoom</translation>
    </message>
    <message>
        <source>All done</source>
        <translation>Todo hecho</translation>
    </message>
    <message>
        <source>Every item in your queue is answered</source>
        <translation>Todos los ítems de tu cola están respondidos</translation>
    </message>
    <message>
        <source>Opening</source>
        <translation>Abriendo</translation>
    </message>
    <message>
        <source>The label session is opening</source>
        <translation>La sesión de evaluación se está abriendo</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>Enunciado</translation>
    </message>
    <message>
        <source>Criteria</source>
        <translation>Criterios</translation>
    </message>
    <message>
        <source>What the output was asked to be</source>
        <translation>Lo que se pidió que fuera el resultado</translation>
    </message>
    <message>
        <source>What the output is judged against</source>
        <translation>Frente a qué se juzga el resultado</translation>
    </message>
    <message>
        <source>Item code</source>
        <translation>Código del ítem</translation>
    </message>
    <message>
        <source>The item&apos;s opaque code (it names nothing)</source>
        <translation>El código opaco del ítem (no nombra nada)</translation>
    </message>
    <message>
        <source>Answer form</source>
        <translation>Formulario de respuesta</translation>
    </message>
    <message>
        <source>One row per metric of the rubric; the framed one takes the keys</source>
        <translation>Una fila por métrica de la rúbrica; la enmarcada recibe las teclas</translation>
    </message>
    <message>
        <source>Instructions ({key})</source>
        <translation>Instrucciones ({key})</translation>
    </message>
    <message>
        <source>Back ({key})</source>
        <translation>Atrás ({key})</translation>
    </message>
    <message>
        <source>Submit ({key})</source>
        <translation>Enviar ({key})</translation>
    </message>
    <message>
        <source>Instructions</source>
        <translation>Instrucciones</translation>
    </message>
    <message>
        <source>Back</source>
        <translation>Atrás</translation>
    </message>
    <message>
        <source>Submit</source>
        <translation>Enviar</translation>
    </message>
    <message>
        <source>Every item is answered: {done} of {total}.
Thank you. {key} goes back to the last answer.</source>
        <translation>Todos los ítems están respondidos: {done} de {total}.
Gracias. {key} vuelve a la última respuesta.</translation>
    </message>
    <message>
        <source>Item {code}</source>
        <translation>Ítem {code}</translation>
    </message>
    <message>
        <source>Correcting an earlier answer: submit to replace it (the old one is kept in the log).</source>
        <translation>Corrigiendo una respuesta anterior: envía para sustituirla (la antigua se conserva en el registro).</translation>
    </message>
    <message>
        <source>An image of this item could not be shown. If you cannot decide, answer “cannot judge” ({key}).</source>
        <translation>No se pudo mostrar una imagen de este ítem. Si no puedes decidir, responde «no se puede juzgar» ({key}).</translation>
    </message>
    <message>
        <source>Your recent answers on “{metric}” have drifted above the reference answers. A short recalibration session brings them back in line.</source>
        <translation>Tus respuestas recientes en «{metric}» se han desviado por encima de las respuestas de referencia. Una sesión corta de recalibración las vuelve a alinear.</translation>
    </message>
    <message>
        <source>Your recent answers on “{metric}” have drifted below the reference answers. A short recalibration session brings them back in line.</source>
        <translation>Tus respuestas recientes en «{metric}» se han desviado por debajo de las respuestas de referencia. Una sesión corta de recalibración las vuelve a alinear.</translation>
    </message>
    <message>
        <source>Your recent answers on “{metric}” have drifted away from the reference answers. A short recalibration session brings them back in line.</source>
        <translation>Tus respuestas recientes en «{metric}» se han alejado de las respuestas de referencia. Una sesión corta de recalibración las vuelve a alinear.</translation>
    </message>
    <message>
        <source>Still to answer: {metric} (and {n} more).</source>
        <translation>Falta por responder: {metric} (y {n} más).</translation>
    </message>
    <message>
        <source>Still to answer: {metric}.</source>
        <translation>Falta por responder: {metric}.</translation>
    </message>
    <message>
        <source>Nothing earlier to go back to in this session.</source>
        <translation>No hay nada anterior a lo que volver en esta sesión.</translation>
    </message>
    <message>
        <source>Saving… Press {key} again once the next item is shown.</source>
        <translation>Guardando… Pulse {key} de nuevo cuando aparezca el siguiente ítem.</translation>
    </message>
    <message>
        <source>Open the folder that holds it</source>
        <translation>Abrir la carpeta que lo contiene</translation>
    </message>
    <message>
        <source>Shows the package file in the file manager, to send it back</source>
        <translation>Muestra el archivo del paquete en el gestor de archivos, para devolverlo</translation>
    </message>
    <message>
        <source>Send this file back to the study lead (by e-mail or a shared folder): it holds your answers.
{path}</source>
        <translation>Devuelva este archivo a la dirección del estudio (por correo o en una carpeta compartida): contiene sus respuestas.
{path}</translation>
    </message>
    <message>
        <source>Open the folder that holds it ({key})</source>
        <translation>Abrir la carpeta que lo contiene ({key})</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>Open a study to begin</source>
        <translation>Abre un estudio para empezar</translation>
    </message>
    <message>
        <source>&amp;Study</source>
        <translation>&amp;Estudio</translation>
    </message>
    <message>
        <source>&amp;Open study folder…</source>
        <translation>&amp;Abrir carpeta de estudio…</translation>
    </message>
    <message>
        <source>Open rater &amp;package…</source>
        <translation>Abrir &amp;paquete de evaluador…</translation>
    </message>
    <message>
        <source>Open a study on a &amp;server…</source>
        <translation>Abrir un estudio en un &amp;servidor…</translation>
    </message>
    <message>
        <source>&amp;New study…</source>
        <translation>&amp;Nuevo estudio…</translation>
    </message>
    <message>
        <source>&amp;Add rater…</source>
        <translation>Añadir &amp;evaluador…</translation>
    </message>
    <message>
        <source>&amp;Leave rater mode…</source>
        <translation>Sa&amp;lir del modo evaluador…</translation>
    </message>
    <message>
        <source>S&amp;tart page</source>
        <translation>Página de &amp;inicio</translation>
    </message>
    <message>
        <source>&amp;Close study</source>
        <translation>&amp;Cerrar el estudio</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>Sa&amp;lir de la aplicación</translation>
    </message>
    <message>
        <source>&amp;Mode</source>
        <translation>&amp;Modo</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>&amp;Idioma</translation>
    </message>
    <message>
        <source>System language</source>
        <translation>Idioma del sistema</translation>
    </message>
    <message>
        <source>Show the app in this language</source>
        <translation>Mostrar la aplicación en este idioma</translation>
    </message>
    <message>
        <source>Rating as {rater}</source>
        <translation>Evaluando como {rater}</translation>
    </message>
    <message>
        <source>{title} — rating as {rater}</source>
        <translation>{title} — evaluando como {rater}</translation>
    </message>
    <message>
        <source>Leaving blinded work</source>
        <translation>Salir del trabajo a ciegas</translation>
    </message>
    <message>
        <source>{doing} leaves blinded work as {rater}.</source>
        <translation>{doing} sale del trabajo a ciegas como {rater}.</translation>
    </message>
    <message>
        <source>The study lead&apos;s views name generators and show every rater&apos;s answers. A rater who has seen them can no longer answer blind. Leave only if you are the study lead.</source>
        <translation>Las vistas de quien dirige el estudio nombran los generadores y muestran las respuestas de todos los evaluadores. Un evaluador que las haya visto ya no puede responder a ciegas. Sal solo si diriges el estudio.</translation>
    </message>
    <message>
        <source>Leave blinded work</source>
        <translation>Salir del trabajo a ciegas</translation>
    </message>
    <message>
        <source>Stay as {rater}</source>
        <translation>Seguir como {rater}</translation>
    </message>
    <message>
        <source>Study lead: no rater chosen</source>
        <translation>Dirección del estudio: ningún evaluador elegido</translation>
    </message>
    <message>
        <source>Leaving rater mode</source>
        <translation>Salir del modo evaluador</translation>
    </message>
    <message>
        <source>Opening a study</source>
        <translation>Abrir un estudio</translation>
    </message>
    <message>
        <source>Creating a study</source>
        <translation>Crear un estudio</translation>
    </message>
    <message>
        <source>Opening {name}…</source>
        <translation>Abriendo {name}…</translation>
    </message>
    <message>
        <source>Study {name} · rubric {rubric}</source>
        <translation>Estudio {name} · rúbrica {rubric}</translation>
    </message>
    <message>
        <source>Closing the study</source>
        <translation>Cerrar el estudio</translation>
    </message>
    <message>
        <source>Closing the study…</source>
        <translation>Cerrando el estudio…</translation>
    </message>
    <message>
        <source>Open a study folder</source>
        <translation>Abrir una carpeta de estudio</translation>
    </message>
    <message>
        <source>Open a rater package</source>
        <translation>Abrir un paquete de evaluador</translation>
    </message>
    <message>
        <source>Rater package (*.annot)</source>
        <translation>Paquete de evaluador (*.annot)</translation>
    </message>
    <message>
        <source>Open a study on a server</source>
        <translation>Abrir un estudio en un servidor</translation>
    </message>
    <message>
        <source>Database URL (postgresql://user@host/db; the password comes from ~/.pgpass or PGPASSWORD):</source>
        <translation>URL de la base de datos (postgresql://usuario@servidor/bd; la contraseña se toma de ~/.pgpass o PGPASSWORD):</translation>
    </message>
    <message>
        <source>Rubric for the new study</source>
        <translation>Rúbrica del nuevo estudio</translation>
    </message>
    <message>
        <source>Rubric (*.toml)</source>
        <translation>Rúbrica (*.toml)</translation>
    </message>
    <message>
        <source>Empty folder for the new study</source>
        <translation>Carpeta vacía para el nuevo estudio</translation>
    </message>
    <message>
        <source>no rater named &apos;{name}&apos; in this study; add one first</source>
        <translation>no hay ningún evaluador llamado «{name}» en este estudio; añádelo primero</translation>
    </message>
    <message>
        <source>Study {name} · rating as {rater}</source>
        <translation>Estudio {name} · evaluando como {rater}</translation>
    </message>
    <message>
        <source>Adding {name}…</source>
        <translation>Añadiendo a {name}…</translation>
    </message>
    <message>
        <source>Add rater</source>
        <translation>Añadir evaluador</translation>
    </message>
    <message>
        <source>Rater name:</source>
        <translation>Nombre del evaluador:</translation>
    </message>
    <message>
        <source>Not in a rater package: it is the study lead&apos;s.</source>
        <translation>No está en un paquete de evaluador: es de quien dirige el estudio.</translation>
    </message>
    <message>
        <source>Not available in this version.</source>
        <translation>No disponible en esta versión.</translation>
    </message>
    <message>
        <source>Open a study first.</source>
        <translation>Abre primero un estudio.</translation>
    </message>
    <message>
        <source>For the study lead only: it names generators. You are rating as {rater}; {key} leaves rater mode.</source>
        <translation>Solo para quien dirige el estudio: nombra los generadores. Estás evaluando como {rater}; {key} sale del modo evaluador.</translation>
    </message>
    <message>
        <source>Pick a rater first.</source>
        <translation>Elige primero un evaluador.</translation>
    </message>
    <message>
        <source>Study {name} · choose a mode</source>
        <translation>Estudio {name} · elige un modo</translation>
    </message>
    <message>
        <source>{mode} is not available now: {why}</source>
        <translation>{mode} no está disponible ahora: {why}</translation>
    </message>
    <message>
        <source>{mode} · study {name}  ·  {key}: start page</source>
        <translation>{mode} · estudio {name}  ·  {key}: página de inicio</translation>
    </message>
    <message>
        <source>No local copy for offline work: {why}</source>
        <translation>Sin copia local para trabajar sin conexión: {why}</translation>
    </message>
    <message>
        <source>The server is unreachable and there is no local copy yet: still retrying</source>
        <translation>No se llega al servidor y aún no hay copia local: se sigue reintentando</translation>
    </message>
    <message>
        <source>Working offline: 1 answer waiting to sync</source>
        <translation>Sin conexión: 1 respuesta pendiente de sincronizar</translation>
    </message>
    <message>
        <source>Working offline: {n} answers waiting to sync</source>
        <translation>Sin conexión: {n} respuestas pendientes de sincronizar</translation>
    </message>
    <message>
        <source>Answers given offline, stored here, sent to the server when it is back</source>
        <translation>Respuestas dadas sin conexión, guardadas aquí, que se envían al servidor cuando vuelve</translation>
    </message>
    <message>
        <source>Back on the server: every answer is synced</source>
        <translation>De vuelta en el servidor: todas las respuestas están sincronizadas</translation>
    </message>
    <message>
        <source>Study lead: no rater chosen (the last session here was the lead&apos;s)</source>
        <translation>Dirección del estudio: ningún evaluador elegido (la última sesión aquí fue de la dirección)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>Ay&amp;uda</translation>
    </message>
    <message>
        <source>&amp;Keys and instructions of this view…</source>
        <translation>&amp;Teclas e instrucciones de esta vista…</translation>
    </message>
    <message>
        <source>The keys of the view on screen and the rubric&apos;s instructions</source>
        <translation>Las teclas de la vista en pantalla y las instrucciones de la rúbrica</translation>
    </message>
</context>
<context>
    <name>MetricRow</name>
    <message>
        <source>PASS</source>
        <translation>APROBADO</translation>
    </message>
    <message>
        <source>FAIL</source>
        <translation>SUSPENSO</translation>
    </message>
    <message>
        <source>no answer</source>
        <translation>sin respuesta</translation>
    </message>
    <message>
        <source>can&apos;t judge</source>
        <translation>no se puede juzgar</translation>
    </message>
    <message>
        <source>none</source>
        <translation>ninguna</translation>
    </message>
    <message>
        <source>  (optional)</source>
        <translation>  (opcional)</translation>
    </message>
    <message>
        <source>Can&apos;t judge ({key})</source>
        <translation>No se puede juzgar ({key})</translation>
    </message>
    <message>
        <source>Can&apos;t judge</source>
        <translation>No se puede juzgar</translation>
    </message>
    <message>
        <source>{metric}: the output does not let you decide (key {key})</source>
        <translation>{metric}: el resultado no permite decidir (tecla {key})</translation>
    </message>
    <message>
        <source>The output does not let you decide (for example it failed to load)</source>
        <translation>El resultado no permite decidir (por ejemplo, no cargó)</translation>
    </message>
    <message>
        <source>{metric}: {answer} (key {key})</source>
        <translation>{metric}: {answer} (tecla {key})</translation>
    </message>
    <message>
        <source>Press {write} to write, {leave} to return to the keys</source>
        <translation>Pulsa {write} para escribir, {leave} para volver a las teclas</translation>
    </message>
</context>
<context>
    <name>PairView</name>
    <message>
        <source>Left is better</source>
        <translation>Mejor el izquierdo</translation>
    </message>
    <message>
        <source>Right is better</source>
        <translation>Mejor el derecho</translation>
    </message>
    <message>
        <source>Both meet it</source>
        <translation>Ambos lo cumplen</translation>
    </message>
    <message>
        <source>Neither meets it</source>
        <translation>Ninguno lo cumple</translation>
    </message>
    <message>
        <source>Opening the pair queue…</source>
        <translation>Abriendo la cola de pares…</translation>
    </message>
    <message>
        <source>Question</source>
        <translation>Pregunta</translation>
    </message>
    <message>
        <source>What to compare</source>
        <translation>Qué comparar</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>Enunciado</translation>
    </message>
    <message>
        <source>What both outputs were asked to be</source>
        <translation>Lo que se pidió que fueran ambos resultados</translation>
    </message>
    <message>
        <source>Criteria</source>
        <translation>Criterios</translation>
    </message>
    <message>
        <source>What both outputs are judged against</source>
        <translation>Frente a qué se juzgan ambos resultados</translation>
    </message>
    <message>
        <source>Left</source>
        <translation>Izquierda</translation>
    </message>
    <message>
        <source>Right</source>
        <translation>Derecha</translation>
    </message>
    <message>
        <source>Vote: {choice} (keys {keys})</source>
        <translation>Voto: {choice} (teclas {keys})</translation>
    </message>
    <message>
        <source>Reason (optional): press {write} to type, {leave} to go back to voting</source>
        <translation>Motivo (opcional): pulsa {write} para escribir, {leave} para volver a votar</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>Motivo</translation>
    </message>
    <message>
        <source>Why you voted as you did (optional)</source>
        <translation>Por qué votaste así (opcional)</translation>
    </message>
    <message>
        <source>Progress</source>
        <translation>Progreso</translation>
    </message>
    <message>
        <source>Pairs voted so far</source>
        <translation>Pares votados hasta ahora</translation>
    </message>
    <message>
        <source>All done</source>
        <translation>Todo hecho</translation>
    </message>
    <message>
        <source>Every pair in your queue has a vote</source>
        <translation>Todos los pares de tu cola tienen voto</translation>
    </message>
    <message>
        <source>{back}: back to the previous pair  ·  {zin} / {zout} / {fit}: zoom both images (drag to pan)  ·  {reason}: reason</source>
        <translation>{back}: volver al par anterior  ·  {zin} / {zout} / {fit}: zoom en ambas imágenes (arrastra para desplazar)  ·  {reason}: motivo</translation>
    </message>
    <message>
        <source>Which output better meets the prompt and criteria?</source>
        <translation>¿Qué resultado cumple mejor el enunciado y los criterios?</translation>
    </message>
    <message>
        <source>This is the first pair of the session: there is nothing to go back to.</source>
        <translation>Este es el primer par de la sesión: no hay nada a lo que volver.</translation>
    </message>
    <message>
        <source>{done} / {total} done</source>
        <translation>{done} / {total} hechos</translation>
    </message>
    <message>
        <source>Every pair in your queue has a vote. Thank you!

{key} goes back to change your last vote.</source>
        <translation>Todos los pares de tu cola tienen voto. ¡Gracias!

{key} vuelve atrás para cambiar tu último voto.</translation>
    </message>
    <message>
        <source>Criteria: {text}</source>
        <translation>Criterios: {text}</translation>
    </message>
    <message>
        <source>Going back: your vote was “{choice}”. A new vote replaces it; {key} returns without changing it.</source>
        <translation>Volviendo atrás: tu voto fue «{choice}». Un voto nuevo lo sustituye; {key} regresa sin cambiarlo.</translation>
    </message>
    <message>
        <source>Loading images…</source>
        <translation>Cargando imágenes…</translation>
    </message>
</context>
<context>
    <name>ReviewView</name>
    <message>
        <source>no category</source>
        <translation>sin categoría</translation>
    </message>
    <message>
        <source>the rubric text was unclear</source>
        <translation>el texto de la rúbrica no era claro</translation>
    </message>
    <message>
        <source>a rater erred</source>
        <translation>un evaluador se equivocó</translation>
    </message>
    <message>
        <source>the judge erred</source>
        <translation>el juez automático se equivocó</translation>
    </message>
    <message>
        <source>the item is ambiguous</source>
        <translation>el elemento es ambiguo</translation>
    </message>
    <message>
        <source>other</source>
        <translation>otra</translation>
    </message>
    <message>
        <source>the raters disagree</source>
        <translation>los evaluadores discrepan</translation>
    </message>
    <message>
        <source>the judge contradicts the raters</source>
        <translation>el juez automático contradice a los evaluadores</translation>
    </message>
    <message>
        <source>a rater could not judge</source>
        <translation>un evaluador no pudo valorarlo</translation>
    </message>
    <message>
        <source>All metrics</source>
        <translation>Todas las métricas</translation>
    </message>
    <message>
        <source>All generators</source>
        <translation>Todos los generadores</translation>
    </message>
    <message>
        <source>All cases</source>
        <translation>Todos los casos</translation>
    </message>
    <message>
        <source>All raters</source>
        <translation>Todos los evaluadores</translation>
    </message>
    <message>
        <source>no clear answer</source>
        <translation>sin respuesta clara</translation>
    </message>
    <message>
        <source>Narrows the list (key {key})</source>
        <translation>Acota la lista (tecla {key})</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>Enunciado</translation>
    </message>
    <message>
        <source>Criteria</source>
        <translation>Criterios</translation>
    </message>
    <message>
        <source>{item} · case {case} · {generator} · {metric}</source>
        <translation>{item} · caso {case} · {generator} · {metric}</translation>
    </message>
    <message>
        <source>Who</source>
        <translation>Quién</translation>
    </message>
    <message>
        <source>Answer</source>
        <translation>Respuesta</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>Motivo</translation>
    </message>
    <message>
        <source>Answers</source>
        <translation>Respuestas</translation>
    </message>
    <message>
        <source>Every rater&apos;s answer and reason, then the judge&apos;s</source>
        <translation>La respuesta y el motivo de cada evaluador, y después los del juez automático</translation>
    </message>
    <message>
        <source>Why it is here: {why}</source>
        <translation>Por qué está aquí: {why}</translation>
    </message>
    <message>
        <source>{judge} (judge)</source>
        <translation>{judge} (juez automático)</translation>
    </message>
    <message>
        <source>Consensus rule: {rule} → {outcome}</source>
        <translation>Regla de consenso: {rule} → {outcome}</translation>
    </message>
    <message>
        <source>Decided: {value} by {by} ({category}): {reason}. A new decision replaces it (the earlier one is kept).</source>
        <translation>Decidido: {value} por {by} ({category}): {reason}. Una nueva decisión la sustituye (la anterior se conserva).</translation>
    </message>
    <message>
        <source>Your decision</source>
        <translation>Tu decisión</translation>
    </message>
    <message>
        <source>Why this answer ({write} to write, {leave} back to the keys)</source>
        <translation>Por qué esta respuesta ({write} para escribir, {leave} para volver a las teclas)</translation>
    </message>
    <message>
        <source>Decided by ({key}):</source>
        <translation>Decide ({key}):</translation>
    </message>
    <message>
        <source>Adjudicator</source>
        <translation>Árbitro</translation>
    </message>
    <message>
        <source>Who decides: recorded with the decision</source>
        <translation>Quién decide: se registra con la decisión</translation>
    </message>
    <message>
        <source>Decide and go on ({key})</source>
        <translation>Decidir y seguir ({key})</translation>
    </message>
    <message>
        <source>Promote to anchor… ({key})</source>
        <translation>Convertir en ancla… ({key})</translation>
    </message>
    <message>
        <source>Rationale:</source>
        <translation>Justificación:</translation>
    </message>
    <message>
        <source>What the anchor teaches ({submit} promotes, {leave} cancels)</source>
        <translation>Qué enseña el ancla ({submit} la crea, {leave} cancela)</translation>
    </message>
    <message>
        <source>Rationale</source>
        <translation>Justificación</translation>
    </message>
    <message>
        <source>Reason category ({key}): {category}</source>
        <translation>Categoría del motivo ({key}): {category}</translation>
    </message>
    <message>
        <source>Review and adjudicate: {name}</source>
        <translation>Revisar y arbitrar: {name}</translation>
    </message>
    <message>
        <source>The study lead&apos;s review of disagreements</source>
        <translation>La revisión de los desacuerdos por quien dirige el estudio</translation>
    </message>
    <message>
        <source>For the study lead: this page names raters and generators. Raters never see it.</source>
        <translation>Para quien dirige el estudio: esta página nombra evaluadores y generadores. Los evaluadores nunca la ven.</translation>
    </message>
    <message>
        <source>Reading the review queue…</source>
        <translation>Leyendo la cola de revisión…</translation>
    </message>
    <message>
        <source>Keys: {next} / {prev} entry, answer keys as in labelling ({none}: no tag), {cat} reason category, {reason} reason, {who} who decides, {submit} decide, {promote} promote to anchor, {decided} hide decided, {clear} clear filters, {reload} read again.</source>
        <translation>Teclas: {next} / {prev} entrada, teclas de respuesta como al etiquetar ({none}: ninguna etiqueta), {cat} categoría del motivo, {reason} motivo, {who} quién decide, {submit} decidir, {promote} convertir en ancla, {decided} ocultar lo decidido, {clear} quitar filtros, {reload} volver a leer.</translation>
    </message>
    <message>
        <source>Review queue</source>
        <translation>Cola de revisión</translation>
    </message>
    <message>
        <source>What needs a decision, most important first</source>
        <translation>Lo que requiere una decisión, lo más importante primero</translation>
    </message>
    <message>
        <source>{open} to decide · {done} decided · {shown} listed</source>
        <translation>{open} por decidir · {done} decididas · {shown} en la lista</translation>
    </message>
    <message>
        <source>Nothing needs a decision here.</source>
        <translation>Aquí nada requiere una decisión.</translation>
    </message>
    <message>
        <source>Nothing needs a decision in this study.</source>
        <translation>En este estudio nada requiere una decisión.</translation>
    </message>
    <message>
        <source>Give the resolved answer first (the answer keys).</source>
        <translation>Primero da la respuesta resuelta (las teclas de respuesta).</translation>
    </message>
    <message>
        <source>Write the reason first ({key}): what decided it.</source>
        <translation>Primero escribe el motivo ({key}): qué lo decidió.</translation>
    </message>
    <message>
        <source>Decided {item} · {metric}: {value}.</source>
        <translation>Decidido {item} · {metric}: {value}.</translation>
    </message>
    <message>
        <source>Nothing undecided follows in this list.</source>
        <translation>En esta lista no queda nada sin decidir a continuación.</translation>
    </message>
    <message>
        <source>Promoted: anchor {anchor}, anchor set version {version}.</source>
        <translation>Convertido: ancla {anchor}, versión {version} del conjunto de anclas.</translation>
    </message>
</context>
<context>
    <name>RubricForm</name>
    <message>
        <source>{key} does not answer “{metric}”: its keys are {keys}.</source>
        <translation>{key} no responde a «{metric}»: sus teclas son {keys}.</translation>
    </message>
    <message>
        <source>Verdict</source>
        <translation>Veredicto</translation>
    </message>
    <message>
        <source>The verdict the rubric&apos;s rules give for the answers so far</source>
        <translation>El veredicto que dan las reglas de la rúbrica a las respuestas hasta ahora</translation>
    </message>
    <message>
        <source>not decided yet</source>
        <translation>aún sin decidir</translation>
    </message>
    <message>
        <source>Verdict by the rubric&apos;s rules: {verdict}</source>
        <translation>Veredicto según las reglas de la rúbrica: {verdict}</translation>
    </message>
</context>
<context>
    <name>SessionView</name>
    <message>
        <source>Too fast: the image was not shown yet. That key was not applied; look, then answer.</source>
        <translation>Demasiado rápido: la imagen aún no se había mostrado. Esa tecla no se aplicó; mira y después responde.</translation>
    </message>
    <message>
        <source>Saving… That key was not applied: answer once the next item is shown.</source>
        <translation>Guardando… Esa tecla no se aplicó: responde cuando se muestre el siguiente elemento.</translation>
    </message>
    <message>
        <source>Keys typed while the last answer was saving were not applied here: {n}. This item is blank until you answer it.</source>
        <translation>Las teclas pulsadas mientras se guardaba la última respuesta no se aplicaron aquí: {n}. Este elemento está en blanco hasta que lo respondas.</translation>
    </message>
    <message>
        <source>Saving…</source>
        <translation>Guardando…</translation>
    </message>
    <message>
        <source>Saving… (still waiting for the study: another program may be writing to it; your answer is kept)</source>
        <translation>Guardando… (sigue esperando al estudio: puede que otro programa esté escribiendo en él; tu respuesta se conserva)</translation>
    </message>
    <message>
        <source>That one had just been answered in another window: the answer given there was kept, this one was not stored. {back} goes back to it.</source>
        <translation>Ese acababa de responderse en otra ventana: se conservó la respuesta dada allí y esta no se guardó. {back} vuelve a él.</translation>
    </message>
    <message>
        <source>Saving failed, your answer is kept; reconnecting (try {n})…</source>
        <translation>No se pudo guardar, tu respuesta se conserva; reconectando (intento {n})…</translation>
    </message>
    <message>
        <source>The study could not be read or written ({error}); nothing was half-saved. Try again; if it keeps failing, check that the study folder is there and writable.</source>
        <translation>No se pudo leer ni escribir el estudio ({error}); no se guardó nada a medias. Inténtalo de nuevo; si sigue fallando, comprueba que la carpeta del estudio existe y se puede escribir.</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>Mensaje</translation>
    </message>
    <message>
        <source>What just happened, in one line</source>
        <translation>Lo que acaba de pasar, en una línea</translation>
    </message>
    <message>
        <source>Reconnected: your answer is saved.</source>
        <translation>Reconectado: tu respuesta está guardada.</translation>
    </message>
    <message>
        <source>{error}  Press {key} to try again.</source>
        <translation>{error}  Pulsa {key} para reintentarlo.</translation>
    </message>
</context>
<context>
    <name>StartPage</name>
    <message>
        <source>Label</source>
        <translation>Evaluar</translation>
    </message>
    <message>
        <source>Pairwise</source>
        <translation>Por pares</translation>
    </message>
    <message>
        <source>Calibration</source>
        <translation>Calibración</translation>
    </message>
    <message>
        <source>Dashboard</source>
        <translation>Panel</translation>
    </message>
    <message>
        <source>Review and adjudicate</source>
        <translation>Revisar y arbitrar</translation>
    </message>
    <message>
        <source>Answer the rubric on one item at a time</source>
        <translation>Responde la rúbrica ítem a ítem</translation>
    </message>
    <message>
        <source>Choose the better of two outputs of the same case</source>
        <translation>Elige el mejor de dos resultados del mismo caso</translation>
    </message>
    <message>
        <source>Answer anchor items and compare with the reference</source>
        <translation>Responde ítems ancla y compara con la referencia</translation>
    </message>
    <message>
        <source>The study lead&apos;s figures: agreement, findings, drift, team progress</source>
        <translation>Las cifras de quien dirige el estudio: acuerdo, hallazgos, deriva, avance del equipo</translation>
    </message>
    <message>
        <source>Resolve disagreements and findings, one key per answer (study lead)</source>
        <translation>Resuelve desacuerdos y hallazgos, una tecla por respuesta (quien dirige el estudio)</translation>
    </message>
    <message>
        <source>Blinded expert rating of generated outputs</source>
        <translation>Evaluación experta a ciegas de resultados generados</translation>
    </message>
    <message>
        <source>1. Study</source>
        <translation>1. Estudio</translation>
    </message>
    <message>
        <source>2. Rater</source>
        <translation>2. Evaluador</translation>
    </message>
    <message>
        <source>3. Mode</source>
        <translation>3. Modo</translation>
    </message>
    <message>
        <source>&amp;Recent studies (Enter opens the selected one)</source>
        <translation>Estudios &amp;recientes (Intro abre el seleccionado)</translation>
    </message>
    <message>
        <source>&amp;Who is rating:</source>
        <translation>&amp;Quién evalúa:</translation>
    </message>
    <message>
        <source>New here? Try the demo study: a few made-up screens to rate, with nothing to set up. Were you sent a rater package (a file ending in .annot)? Open it: it holds your work for the study.</source>
        <translation>¿Es tu primera vez? Prueba el estudio de demostración: unas cuantas pantallas inventadas para evaluar, sin nada que configurar. ¿Te enviaron un paquete de evaluador (un archivo que termina en .annot)? Ábrelo: contiene tu trabajo para el estudio.</translation>
    </message>
    <message>
        <source>Try the demo study</source>
        <translation>Probar el estudio de demostración</translation>
    </message>
    <message>
        <source>Builds the demo study once and opens it</source>
        <translation>Crea una vez el estudio de demostración y lo abre</translation>
    </message>
    <message>
        <source>Open a rater package…</source>
        <translation>Abrir un paquete de evaluador…</translation>
    </message>
    <message>
        <source>Opens a .annot file: one rater&apos;s blinded work</source>
        <translation>Abre un archivo .annot: el trabajo a ciegas de un evaluador</translation>
    </message>
    <message>
        <source>Open study folder…</source>
        <translation>Abrir carpeta de estudio…</translation>
    </message>
    <message>
        <source>Opens a study folder (study.sqlite + media)</source>
        <translation>Abre una carpeta de estudio (study.sqlite + media)</translation>
    </message>
    <message>
        <source>Study on a server…</source>
        <translation>Estudio en un servidor…</translation>
    </message>
    <message>
        <source>Opens a study kept on a PostgreSQL server, by its URL</source>
        <translation>Abre un estudio guardado en un servidor PostgreSQL, por su URL</translation>
    </message>
    <message>
        <source>New study…</source>
        <translation>Nuevo estudio…</translation>
    </message>
    <message>
        <source>Creates a study folder from a rubric file</source>
        <translation>Crea una carpeta de estudio a partir de un archivo de rúbrica</translation>
    </message>
    <message>
        <source>Add rater…</source>
        <translation>Añadir evaluador…</translation>
    </message>
    <message>
        <source>Adds a rater account to the study (study lead)</source>
        <translation>Añade una cuenta de evaluador al estudio (dirección del estudio)</translation>
    </message>
    <message>
        <source>Leave rater mode…</source>
        <translation>Salir del modo evaluador…</translation>
    </message>
    <message>
        <source>Back to the study lead&apos;s views; asks first, because it leaves blinded work</source>
        <translation>Vuelve a las vistas de quien dirige el estudio; pregunta antes, porque sale del trabajo a ciegas</translation>
    </message>
    <message>
        <source>Recent studies</source>
        <translation>Estudios recientes</translation>
    </message>
    <message>
        <source>Studies opened before; Enter opens the selected one</source>
        <translation>Estudios abiertos antes; Intro abre el seleccionado</translation>
    </message>
    <message>
        <source>Rater</source>
        <translation>Evaluador</translation>
    </message>
    <message>
        <source>Who is rating: choosing a rater enters rater mode</source>
        <translation>Quién evalúa: elegir un evaluador entra en el modo evaluador</translation>
    </message>
    <message>
        <source>rater package</source>
        <translation>paquete de evaluador</translation>
    </message>
    <message>
        <source>study on a server</source>
        <translation>estudio en un servidor</translation>
    </message>
    <message>
        <source>study</source>
        <translation>estudio</translation>
    </message>
    <message>
        <source>{name}  ·  {kind}  ·  rubric: {rubric}</source>
        <translation>{name}  ·  {kind}  ·  rúbrica: {rubric}</translation>
    </message>
    <message>
        <source>Opening…</source>
        <translation>Abriendo…</translation>
    </message>
    <message>
        <source>No study open.</source>
        <translation>Ningún estudio abierto.</translation>
    </message>
    <message>
        <source>{name} (operator)</source>
        <translation>{name} (operador)</translation>
    </message>
    <message>
        <source>This package holds {rater}&apos;s work only.</source>
        <translation>Este paquete contiene solo el trabajo de {rater}.</translation>
    </message>
    <message>
        <source>Rater mode: the study lead&apos;s views are closed while you rate.</source>
        <translation>Modo evaluador: las vistas de quien dirige el estudio están cerradas mientras evalúas.</translation>
    </message>
    <message>
        <source>Study lead: no rater chosen. Choosing a rater enters rater mode.</source>
        <translation>Dirección del estudio: ningún evaluador elegido. Elegir un evaluador entra en el modo evaluador.</translation>
    </message>
    <message>
        <source>Open a study first.</source>
        <translation>Abre primero un estudio.</translation>
    </message>
    <message>
        <source>Pick or add a rater to start.</source>
        <translation>Elige o añade un evaluador para empezar.</translation>
    </message>
    <message>
        <source>Rating as {rater}.</source>
        <translation>Evaluando como {rater}.</translation>
    </message>
    <message>
        <source>Rating as {rater}. Not you? Pick your name above.</source>
        <translation>Evaluando como {rater}. ¿No eres tú? Elige tu nombre arriba.</translation>
    </message>
</context>
<context>
    <name>VerdictRules</name>
    <message>
        <source>{metric} is {value}</source>
        <translation>{metric} es {value}</translation>
    </message>
    <message>
        <source>{metric} is not {value}</source>
        <translation>{metric} no es {value}</translation>
    </message>
    <message>
        <source>{metric} is at least {value}</source>
        <translation>{metric} es al menos {value}</translation>
    </message>
    <message>
        <source>{metric} is at most {value}</source>
        <translation>{metric} es como mucho {value}</translation>
    </message>
    <message>
        <source>{metric} is more than {value}</source>
        <translation>{metric} es más de {value}</translation>
    </message>
    <message>
        <source>{metric} is less than {value}</source>
        <translation>{metric} es menos de {value}</translation>
    </message>
    <message>
        <source>{metric} includes {value}</source>
        <translation>{metric} incluye {value}</translation>
    </message>
    <message>
        <source>not ({rule})</source>
        <translation>no ({rule})</translation>
    </message>
    <message>
        <source> and </source>
        <translation> y </translation>
    </message>
    <message>
        <source> or </source>
        <translation> o </translation>
    </message>
    <message>
        <source>The verdict is {pass} when every rule below holds, {fail} when one does not, and open while a metric it needs is unanswered or cannot be judged.</source>
        <translation>El veredicto es {pass} cuando se cumplen todas las reglas de abajo, {fail} cuando una no se cumple, y queda abierto mientras falte una métrica que necesita o no se pueda juzgar.</translation>
    </message>
</context>
<context>
    <name>keymap</name>
    <message>
        <source>Follow the study&apos;s changes (on or off)</source>
        <translation>Seguir los cambios del estudio (sí o no)</translation>
    </message>
    <message>
        <source>Open a study folder</source>
        <translation>Abrir una carpeta de estudio</translation>
    </message>
    <message>
        <source>Open a rater package (.annot)</source>
        <translation>Abrir un paquete de evaluador (.annot)</translation>
    </message>
    <message>
        <source>Open a study on a server</source>
        <translation>Abrir un estudio en un servidor</translation>
    </message>
    <message>
        <source>Leave rater mode (the study lead&apos;s views)</source>
        <translation>Salir del modo evaluador (las vistas de quien dirige el estudio)</translation>
    </message>
    <message>
        <source>New study</source>
        <translation>Nuevo estudio</translation>
    </message>
    <message>
        <source>Add a rater</source>
        <translation>Añadir un evaluador</translation>
    </message>
    <message>
        <source>Start page</source>
        <translation>Página de inicio</translation>
    </message>
    <message>
        <source>Close the study</source>
        <translation>Cerrar el estudio</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>Salir</translation>
    </message>
    <message>
        <source>Label mode</source>
        <translation>Modo evaluar</translation>
    </message>
    <message>
        <source>Pairwise mode</source>
        <translation>Modo por pares</translation>
    </message>
    <message>
        <source>Calibration mode</source>
        <translation>Modo calibración</translation>
    </message>
    <message>
        <source>Dashboard (study lead)</source>
        <translation>Panel (dirección del estudio)</translation>
    </message>
    <message>
        <source>Review and adjudicate (study lead)</source>
        <translation>Revisar y arbitrar (quien dirige el estudio)</translation>
    </message>
    <message>
        <source>PASS on the focused gate</source>
        <translation>APROBADO en la puerta enfocada</translation>
    </message>
    <message>
        <source>FAIL on the focused gate</source>
        <translation>SUSPENSO en la puerta enfocada</translation>
    </message>
    <message>
        <source>Answer this digit (scale value, point, option or tag number)</source>
        <translation>Responder con este dígito (valor de escala, punto, opción o número de etiqueta)</translation>
    </message>
    <message>
        <source>Cannot judge the focused metric</source>
        <translation>No se puede juzgar la métrica enfocada</translation>
    </message>
    <message>
        <source>Clear the focused metric</source>
        <translation>Borrar la métrica enfocada</translation>
    </message>
    <message>
        <source>Next metric</source>
        <translation>Métrica siguiente</translation>
    </message>
    <message>
        <source>Previous metric</source>
        <translation>Métrica anterior</translation>
    </message>
    <message>
        <source>Write the reason</source>
        <translation>Escribir el motivo</translation>
    </message>
    <message>
        <source>Close the notice above the item</source>
        <translation>Cerrar el aviso sobre el ítem</translation>
    </message>
    <message>
        <source>Leave the reason box (back to the keys)</source>
        <translation>Salir del cuadro de motivo (volver a las teclas)</translation>
    </message>
    <message>
        <source>Submit and go to the next item</source>
        <translation>Enviar y pasar al siguiente ítem</translation>
    </message>
    <message>
        <source>Rubric instructions and keys</source>
        <translation>Instrucciones de la rúbrica y teclas</translation>
    </message>
    <message>
        <source>Back to the previous item or pair</source>
        <translation>Volver al ítem o par anterior</translation>
    </message>
    <message>
        <source>Zoom in</source>
        <translation>Acercar</translation>
    </message>
    <message>
        <source>Zoom out</source>
        <translation>Alejar</translation>
    </message>
    <message>
        <source>Fit images to the window</source>
        <translation>Ajustar las imágenes a la ventana</translation>
    </message>
    <message>
        <source>Images at 100 %</source>
        <translation>Imágenes al 100 %</translation>
    </message>
    <message>
        <source>Show or hide the edit mask</source>
        <translation>Mostrar u ocultar la máscara de edición</translation>
    </message>
    <message>
        <source>Left is better</source>
        <translation>Mejor el izquierdo</translation>
    </message>
    <message>
        <source>Right is better</source>
        <translation>Mejor el derecho</translation>
    </message>
    <message>
        <source>Both meet it</source>
        <translation>Ambos lo cumplen</translation>
    </message>
    <message>
        <source>Neither meets it</source>
        <translation>Ninguno lo cumple</translation>
    </message>
    <message>
        <source>Type a reason for the vote</source>
        <translation>Escribir un motivo para el voto</translation>
    </message>
    <message>
        <source>Back to voting from the reason</source>
        <translation>Volver a votar desde el motivo</translation>
    </message>
    <message>
        <source>Forward to the first pair without a vote</source>
        <translation>Avanzar al primer par sin voto</translation>
    </message>
    <message>
        <source>Continue (next anchor, or done on the result)</source>
        <translation>Continuar (siguiente ancla, o terminar en el resultado)</translation>
    </message>
    <message>
        <source>Leave the calibration result</source>
        <translation>Salir del resultado de calibración</translation>
    </message>
    <message>
        <source>Recompute the report</source>
        <translation>Recalcular el informe</translation>
    </message>
    <message>
        <source>Cancel the computation</source>
        <translation>Cancelar el cálculo</translation>
    </message>
    <message>
        <source>Page down</source>
        <translation>Página abajo</translation>
    </message>
    <message>
        <source>Page up</source>
        <translation>Página arriba</translation>
    </message>
    <message>
        <source>Scroll down</source>
        <translation>Desplazar abajo</translation>
    </message>
    <message>
        <source>Scroll up</source>
        <translation>Desplazar arriba</translation>
    </message>
    <message>
        <source>Top of the page</source>
        <translation>Principio de la página</translation>
    </message>
    <message>
        <source>End of the page</source>
        <translation>Final de la página</translation>
    </message>
    <message>
        <source>Next section</source>
        <translation>Sección siguiente</translation>
    </message>
    <message>
        <source>Previous section</source>
        <translation>Sección anterior</translation>
    </message>
    <message>
        <source>Next entry</source>
        <translation>Entrada siguiente</translation>
    </message>
    <message>
        <source>Previous entry</source>
        <translation>Entrada anterior</translation>
    </message>
    <message>
        <source>Next reason category</source>
        <translation>Siguiente categoría del motivo</translation>
    </message>
    <message>
        <source>Write who decides (the adjudicator)</source>
        <translation>Escribir quién decide (el árbitro)</translation>
    </message>
    <message>
        <source>Promote the item to an anchor (asks for a rationale)</source>
        <translation>Convertir el elemento en ancla (pide una justificación)</translation>
    </message>
    <message>
        <source>Show or hide the entries already decided</source>
        <translation>Mostrar u ocultar las entradas ya decididas</translation>
    </message>
    <message>
        <source>Filter: next metric</source>
        <translation>Filtro: métrica siguiente</translation>
    </message>
    <message>
        <source>Filter: next generator</source>
        <translation>Filtro: generador siguiente</translation>
    </message>
    <message>
        <source>Filter: next case</source>
        <translation>Filtro: caso siguiente</translation>
    </message>
    <message>
        <source>Filter: next rater</source>
        <translation>Filtro: evaluador siguiente</translation>
    </message>
    <message>
        <source>Clear every filter</source>
        <translation>Quitar todos los filtros</translation>
    </message>
    <message>
        <source>Read the review queue again</source>
        <translation>Volver a leer la cola de revisión</translation>
    </message>
    <message>
        <source>Fit to the window</source>
        <translation>Ajustar a la ventana</translation>
    </message>
    <message>
        <source>100 %</source>
        <translation>100 %</translation>
    </message>
    <message>
        <source>Close the dialog</source>
        <translation>Cerrar el diálogo</translation>
    </message>
    <message>
        <source>Scale value, likert point, option or tag number</source>
        <translation>Valor de escala, punto likert, opción o número de etiqueta</translation>
    </message>
</context>
</TS>
